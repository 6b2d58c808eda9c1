import {
  clockDegFromHhMm,
  dentDepthPctOdFrom,
  depthPctWtFrom,
  hhMmFromClockDeg,
  InvalidMappingProfileError,
  M_PER_FOOT,
  metresFrom,
  millimetresFrom,
  MM_PER_INCH,
  POF_DEFAULT_PROFILE,
  TALLY_KINDS,
  validateMappingProfile,
} from '../ili/listing';

/**
 * Units: the international yard and pound agreement of 1959 defines 1 in = 25.4 mm and 1 ft = 0.3048 m exactly
 * (NIST Special Publication 811, 2008 edition, Appendix B.8: "foot (ft) ... meter (m) 3.048 E-01" and "inch (in) ...
 * meter (m) 2.54 E-02", both marked as exact).
 */
describe('ILI listing units', () => {
  it('uses the exact international inch and foot', () => {
    expect(MM_PER_INCH).toBe(25.4);
    expect(M_PER_FOOT).toBe(0.3048);
    // Hand-computed: 1 mile = 5,280 ft = 1,609.344 m exactly; 0.375 in (a common wall) = 9.525 mm.
    expect(metresFrom(5280, 'ft')).toBeCloseTo(1609.344, 9);
    expect(millimetresFrom(0.375, 'in')).toBeCloseTo(9.525, 12);
    expect(metresFrom(12.5, 'm')).toBe(12.5);
  });

  it('turns depths in mm or in into % of wall and dent depths into % of OD', () => {
    // 0.1 in deep in a 0.375 in wall: 2.54 / 9.525 = 26.67 % of wall.
    expect(depthPctWtFrom(0.1, 'IN', 9.525)).toBeCloseTo(26.6667, 3);
    // 3 mm in 12 mm: 25 %.
    expect(depthPctWtFrom(3, 'MM', 12)).toBeCloseTo(25, 12);
    expect(depthPctWtFrom(40, 'PCT_WT', 12)).toBe(40);
    // A 0.5 in dent in a 24 in (609.6 mm) pipe: 12.7 / 609.6 = 2.0833 % of OD.
    expect(dentDepthPctOdFrom(0.5, 'IN', 609.6)).toBeCloseTo(2.08333, 4);
    expect(dentDepthPctOdFrom(6.096, 'MM', 609.6)).toBeCloseTo(1, 12);
  });

  it('reads clock positions on a 12-hour face, 30° an hour and 0.5° a minute', () => {
    // POF 100 (2016 edition, Appendix 6) tally example positions: 10:32, 0:22, 8:36, 4:42.
    expect(clockDegFromHhMm('10:32')).toBe(316);
    expect(clockDegFromHhMm('0:22')).toBe(11);
    expect(clockDegFromHhMm('8:36')).toBe(258);
    expect(clockDegFromHhMm('4:42')).toBe(141);
    expect(clockDegFromHhMm('12:00')).toBe(0);
    expect(clockDegFromHhMm('6:00')).toBe(180);
    // The top hour written the other common way.
    expect(clockDegFromHhMm('12:22')).toBe(11);
    for (const bad of ['13:00', '10:60', '9', 'ten past', '-1:00', '']) expect(clockDegFromHhMm(bad)).toBeNull();
    expect(hhMmFromClockDeg(11)).toBe('0:22');
    expect(hhMmFromClockDeg(316)).toBe('10:32');
    expect(hhMmFromClockDeg(359.9)).toBe('0:00');
  });
});

describe('ILI mapping profiles', () => {
  const valid = {
    id: 'vendor-x',
    name: 'Vendor X MFL',
    vendor: 'Vendor X',
    columns: { logDistance: 'Odometer (ft)', eventType: 'Event', depth: 'Depth (in)', length: 'Length (in)' },
    units: { distance: 'ft', sizes: 'in', depth: 'IN', dentDepth: 'IN', clock: 'DEGREES' },
    events: { GW: 'GIRTH_WELD', 'Ext ML': 'METAL_LOSS' },
  };

  it('accepts a complete profile', () => {
    expect(validateMappingProfile(valid).units.distance).toBe('ft');
  });

  it('names the offending field of a bad profile', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ ...valid, units: { ...valid.units, depth: 'PERCENT' } }, /units\.depth: must be PCT_WT, MM or IN/],
      [{ ...valid, units: { ...valid.units, distance: 'km' } }, /units\.distance: must be m or ft/],
      [{ ...valid, columns: { eventType: 'Event' } }, /columns\.logDistance/],
      [{ ...valid, events: { GW: 'WELD' } }, /events\.GW: must be one of GIRTH_WELD, VALVE/],
      [{ ...valid, events: {} }, /events: must map at least one event text/],
      [{ ...valid, events: { gw: 'GIRTH_WELD', GW: 'VALVE' } }, /events\.GW: maps "GW" to VALVE but the same text \(ignoring case\) to GIRTH_WELD/],
      [{ ...valid, columns: { ...valid.columns, length: 'Depth (in)' } }, /columns\.length: names the same column as depth/],
      [{ ...valid, columns: { ...valid.columns, depht: 'x' } }, /columns: .*depht/i],
      [{ ...valid, id: '' }, /id: must not be empty/],
    ];
    for (const [profile, message] of cases) {
      expect(() => validateMappingProfile(profile)).toThrow(InvalidMappingProfileError);
      expect(() => validateMappingProfile(profile)).toThrow(message);
    }
  });

  it('has a POF default profile in metres, millimetres, % of wall, % of OD and h:mm', () => {
    expect(POF_DEFAULT_PROFILE.units).toEqual({ distance: 'm', sizes: 'mm', depth: 'PCT_WT', dentDepth: 'PCT_OD', clock: 'HH:MM' });
    expect(POF_DEFAULT_PROFILE.columns.logDistance).toBe('Log distance [m]');
    expect(POF_DEFAULT_PROFILE.columns.eventType).toBe('Feature type');
    expect(POF_DEFAULT_PROFILE.columns.eventIdentification).toBe('Feature identification');
  });

  it('counts the first eight kinds as the tally', () => {
    expect([...TALLY_KINDS]).toEqual(['GIRTH_WELD', 'VALVE', 'TEE', 'BEND', 'FLANGE', 'WALL_THICKNESS_CHANGE', 'REFERENCE_MARKER', 'OTHER_TALLY']);
  });
});
