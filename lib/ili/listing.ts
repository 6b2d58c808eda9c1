import { z } from 'zod';

/**
 * The canonical in-line inspection (ILI) listing: one row per event along the pipe at the tool's log (odometer)
 * distance, whatever the vendor's columns and units were. Vendor files reach this shape through a MappingProfile.
 *
 * Vocabulary source: Pipeline Operators Forum, "Specifications and requirements for in-line inspection of pipelines",
 * POF 100, November 2021 (supersedes the 2016 edition; its change list adds the anomaly types lamination, coating
 * disbondment, hard spot and material identification), and the pipe tally of that specification's 2016 edition,
 * Appendix 6 "Typical example of Pipe tally": the columns "Log distance [m]", "Feature type", "Feature
 * identification", "Girth weld Nr", "Joint / component length", "Nominal thickness [mm]", "Clock position",
 * "Surface location" (Ext / Int), "Max. depth [%.t or mm]", "Size (length x width) [mm]", "Depth / height [%.D or mm]",
 * "Comment / Cluster ID", and the feature words "Weld", "Valve", "Anomaly", "Above ground marker", "Change wall
 * thickness", "Corrosion", "Dent", "Gouge", "Mill anomaly" and "... Cluster".
 */

export const ILI_EVENT_KINDS = [
  'GIRTH_WELD',
  'VALVE',
  'TEE',
  'BEND',
  'FLANGE',
  'WALL_THICKNESS_CHANGE',
  'REFERENCE_MARKER',
  'OTHER_TALLY',
  'METAL_LOSS',
  'DENT',
  'CRACK',
  'GOUGE',
  'LAMINATION',
  'WELD_ANOMALY',
] as const;

export type IliEventKind = (typeof ILI_EVENT_KINDS)[number];

/** The pipe tally (the first eight kinds): girth welds and the fittings and markers a run is aligned on. */
export const TALLY_KINDS: ReadonlySet<IliEventKind> = new Set<IliEventKind>(ILI_EVENT_KINDS.slice(0, ILI_EVENT_KINDS.indexOf('OTHER_TALLY') + 1));

export type IliSurface = 'EXTERNAL' | 'INTERNAL' | 'MID_WALL';

export interface IliListingRow {
  /** The row as the user sees it in the file (header = row 1, first data row = 2). */
  rowNumber: number;
  kind: IliEventKind;
  /** Tool odometer, metres. */
  logDistanceM: number;
  vendorFeatureId: string | null;
  /** Joint the event is in (for a girth weld: the joint that starts at it). */
  jointNumber: number | null;
  /** Girth welds: length of the joint starting at this weld. */
  jointLengthM: number | null;
  wallThicknessMm: number | null;
  /** 0–360, clockwise from top, looking downstream. */
  clockDeg: number | null;
  /** Metal loss (and cracks/gouges): % of wall. */
  depthPctWt: number | null;
  lengthMm: number | null;
  widthMm: number | null;
  /** Dents: % of outside diameter. */
  dentDepthPctOd: number | null;
  surface: IliSurface | null;
  /** Reference markers / AGMs, valves: their name. */
  markerName: string | null;
  comment: string | null;
}

/** Exact by definition: the international inch (1959) is 25.4 mm and the international foot 0.3048 m. */
export const MM_PER_INCH = 25.4;
export const M_PER_FOOT = 0.3048;

export type DistanceUnit = 'm' | 'ft';
export type SizeUnit = 'mm' | 'in';
export type DepthUnit = 'PCT_WT' | 'MM' | 'IN';
export type DentDepthUnit = 'PCT_OD' | 'MM' | 'IN';
export type ClockFormat = 'HH:MM' | 'DEGREES';

export function metresFrom(value: number, unit: DistanceUnit): number {
  return unit === 'm' ? value : value * M_PER_FOOT;
}

export function millimetresFrom(value: number, unit: SizeUnit): number {
  return unit === 'mm' ? value : value * MM_PER_INCH;
}

/** A depth in the profile's unit as % of the wall it is measured in. */
export function depthPctWtFrom(value: number, unit: DepthUnit, wallThicknessMm: number): number {
  if (unit === 'PCT_WT') return value;
  const depthMm = unit === 'MM' ? value : value * MM_PER_INCH;
  return (depthMm / wallThicknessMm) * 100;
}

/** A dent depth in the profile's unit as % of the outside diameter. */
export function dentDepthPctOdFrom(value: number, unit: DentDepthUnit, outsideDiameterMm: number): number {
  if (unit === 'PCT_OD') return value;
  const depthMm = unit === 'MM' ? value : value * MM_PER_INCH;
  return (depthMm / outsideDiameterMm) * 100;
}

/**
 * "h:mm" on a 12-hour clock face to degrees clockwise from top: one hour is 30°, one minute 0.5°; 0:00 and 12:00 are
 * the top. POF writes the top hour as 0:xx ("0:22" in its tally example); many vendors write 12:xx, which is the same
 * place on the face, so 12:01–12:59 are read as 0:01–0:59. Null for anything else.
 */
export function clockDegFromHhMm(text: string): number | null {
  const match = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(text.trim());
  if (!match) return null;
  const hours = Number(match[1]);
  const minutes = Number(match[2]);
  const seconds = match[3] === undefined ? 0 : Number(match[3]);
  if (minutes > 59 || seconds > 59) return null;
  if (hours > 12) return null;
  return ((hours % 12) * 60 + minutes + seconds / 60) * 0.5;
}

/** Degrees clockwise from top as POF writes them, "h:mm" from 0:00 to 11:59, rounded to the minute. */
export function hhMmFromClockDeg(deg: number): string {
  const totalMinutes = Math.round((((deg % 360) + 360) % 360) * 2) % 720;
  return `${Math.floor(totalMinutes / 60)}:${String(totalMinutes % 60).padStart(2, '0')}`;
}

/** The canonical fields a profile maps from the vendor's columns. */
export const MAPPED_FIELDS = [
  'logDistance',
  'eventType',
  'eventIdentification',
  'vendorFeatureId',
  'jointNumber',
  'jointLength',
  'wallThickness',
  'clock',
  'depth',
  'length',
  'width',
  'dentDepth',
  'surface',
  'markerName',
  'comment',
] as const;

export type MappedField = (typeof MAPPED_FIELDS)[number];

const columnName = z.string().trim().min(1, 'must not be empty').max(200, 'at most 200 characters');

const columnsSchema = z
  .object({
    /** Required: every row has a position. */
    logDistance: columnName,
    /** Required: the text the event dictionary classifies (POF "Feature type"). */
    eventType: columnName,
    /**
     * POF lists anomalies as the type "Anomaly" with the kind in "Feature identification" ("Corrosion", "Dent", ...):
     * when the type text is not in the dictionary, the identification text is looked up.
     */
    eventIdentification: columnName.optional(),
    vendorFeatureId: columnName.optional(),
    jointNumber: columnName.optional(),
    jointLength: columnName.optional(),
    wallThickness: columnName.optional(),
    clock: columnName.optional(),
    depth: columnName.optional(),
    length: columnName.optional(),
    width: columnName.optional(),
    dentDepth: columnName.optional(),
    surface: columnName.optional(),
    markerName: columnName.optional(),
    comment: columnName.optional(),
  })
  .strict()
  .superRefine((columns, ctx) => {
    const seen = new Map<string, string>();
    for (const [field, name] of Object.entries(columns)) {
      if (name === undefined) continue;
      const key = name.toLowerCase();
      const other = seen.get(key);
      // One column feeding two fields is almost always a copy-paste slip in the profile.
      if (other) ctx.addIssue({ code: 'custom', path: [field], message: `names the same column as ${other} ("${name}")` });
      else seen.set(key, field);
    }
  });

const kindSchema = z.enum(ILI_EVENT_KINDS, { error: () => `must be one of ${ILI_EVENT_KINDS.join(', ')}` });

const dictionarySchema = z
  .record(z.string().trim().min(1, 'event text must not be empty').max(200, 'event text: at most 200 characters'), kindSchema)
  .refine((dictionary) => Object.keys(dictionary).length > 0, 'must map at least one event text')
  .superRefine((dictionary, ctx) => {
    const seen = new Map<string, string>();
    for (const [text, kind] of Object.entries(dictionary)) {
      const key = normaliseEventText(text);
      const earlier = seen.get(key);
      if (earlier !== undefined && earlier !== kind)
        ctx.addIssue({ code: 'custom', path: [text], message: `maps "${text}" to ${kind} but the same text (ignoring case) to ${earlier}` });
      seen.set(key, kind);
    }
  });

const surfaceSchema = z.record(z.string().trim().min(1).max(50), z.enum(['EXTERNAL', 'INTERNAL', 'MID_WALL']));

export const mappingProfileSchema = z
  .object({
    id: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
    name: z.string().trim().min(1, 'must not be empty').max(200, 'at most 200 characters'),
    vendor: z.string().trim().min(1, 'must not be empty').max(200, 'at most 200 characters'),
    columns: columnsSchema,
    units: z
      .object({
        distance: z.enum(['m', 'ft'], { error: () => 'must be m or ft' }),
        sizes: z.enum(['mm', 'in'], { error: () => 'must be mm or in' }),
        depth: z.enum(['PCT_WT', 'MM', 'IN'], { error: () => 'must be PCT_WT, MM or IN' }),
        dentDepth: z.enum(['PCT_OD', 'MM', 'IN'], { error: () => 'must be PCT_OD, MM or IN' }),
        clock: z.enum(['HH:MM', 'DEGREES'], { error: () => 'must be HH:MM or DEGREES' }),
      })
      .strict(),
    /** Vendor event/feature text -> kind, matched ignoring case and surrounding spaces. */
    events: dictionarySchema,
    /** Vendor surface text -> surface, matched ignoring case; DEFAULT_SURFACE_NAMES when absent. */
    surfaces: surfaceSchema.optional(),
    /** CSV field delimiter (European vendors often use ";"). */
    csvDelimiter: z.enum([',', ';', '\t', '|'], { error: () => 'must be one of , ; tab |' }).optional(),
    /** XLSX: the worksheet holding the listing; the first worksheet when absent. */
    sheetName: z.string().trim().min(1).max(31, 'at most 31 characters (an Excel sheet name)').optional(),
  })
  .strict();

export type MappingProfile = z.input<typeof mappingProfileSchema>;
export type ValidMappingProfile = z.output<typeof mappingProfileSchema>;

export class InvalidMappingProfileError extends Error {
  constructor(readonly violations: Array<{ field: string; message: string }>) {
    super(`invalid ILI mapping profile: ${violations.map((v) => `${v.field}: ${v.message}`).join('; ')}`);
    this.name = 'InvalidMappingProfileError';
  }
}

/** Checks a profile (typically stored JSON); the error names each offending field, e.g. "units.depth: must be PCT_WT, MM or IN". */
export function validateMappingProfile(profile: unknown): ValidMappingProfile {
  const result = mappingProfileSchema.safeParse(profile);
  if (result.success) return result.data;
  throw new InvalidMappingProfileError(
    result.error.issues.map((issue) => ({ field: issue.path.map(String).join('.') || '(profile)', message: issue.message })),
  );
}

export function normaliseEventText(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

export const DEFAULT_SURFACE_NAMES: Readonly<Record<string, IliSurface>> = {
  ext: 'EXTERNAL',
  external: 'EXTERNAL',
  e: 'EXTERNAL',
  int: 'INTERNAL',
  internal: 'INTERNAL',
  i: 'INTERNAL',
  mid: 'MID_WALL',
  'mid-wall': 'MID_WALL',
  'mid wall': 'MID_WALL',
  midwall: 'MID_WALL',
  embedded: 'MID_WALL',
};

/**
 * The POF words (see the header comment) for the feature types and identifications, with the plain synonyms vendors
 * print for the same things. Types come first in a lookup, so a "Weld" row that POF also marks "Change wall thickness"
 * or "Bend begin" stays a girth weld of the tally.
 */
export const POF_EVENT_DICTIONARY: Readonly<Record<string, IliEventKind>> = {
  // POF feature types (pipeline components)
  Weld: 'GIRTH_WELD',
  'Girth weld': 'GIRTH_WELD',
  Valve: 'VALVE',
  Tee: 'TEE',
  'Barred tee': 'TEE',
  'Off-take': 'TEE',
  'Hot tap': 'TEE',
  Bend: 'BEND',
  'Bend begin': 'BEND',
  'Bend end': 'BEND',
  Flange: 'FLANGE',
  'Change wall thickness': 'WALL_THICKNESS_CHANGE',
  'Wall thickness change': 'WALL_THICKNESS_CHANGE',
  'Above ground marker': 'REFERENCE_MARKER',
  AGM: 'REFERENCE_MARKER',
  Marker: 'REFERENCE_MARKER',
  'Reference marker': 'REFERENCE_MARKER',
  Magnet: 'REFERENCE_MARKER',
  Installation: 'OTHER_TALLY',
  Casing: 'OTHER_TALLY',
  Sleeve: 'OTHER_TALLY',
  'Repair sleeve': 'OTHER_TALLY',
  Support: 'OTHER_TALLY',
  Anode: 'OTHER_TALLY',
  Fitting: 'OTHER_TALLY',
  // POF feature identifications (anomalies; the type column reads "Anomaly")
  Corrosion: 'METAL_LOSS',
  'Corrosion cluster': 'METAL_LOSS',
  'Metal loss': 'METAL_LOSS',
  'Mill anomaly': 'METAL_LOSS',
  'Mill anomaly cluster': 'METAL_LOSS',
  Grinding: 'METAL_LOSS',
  Dent: 'DENT',
  'Dent, kinked': 'DENT',
  Crack: 'CRACK',
  'Crack-like': 'CRACK',
  'Crack field': 'CRACK',
  'Stress corrosion cracking': 'CRACK',
  Gouge: 'GOUGE',
  'Gouge cluster': 'GOUGE',
  Lamination: 'LAMINATION',
  'Girth weld anomaly': 'WELD_ANOMALY',
  'Seam weld anomaly': 'WELD_ANOMALY',
  'Weld anomaly': 'WELD_ANOMALY',
};

/** The column headers of the default profile, in the order the generator writes them. */
export const POF_COLUMNS = {
  logDistance: 'Log distance [m]',
  eventType: 'Feature type',
  eventIdentification: 'Feature identification',
  vendorFeatureId: 'Feature ID',
  jointNumber: 'Girth weld Nr',
  jointLength: 'Joint / component length [m]',
  wallThickness: 'Nominal thickness [mm]',
  clock: 'Clock position [h:min]',
  surface: 'Surface location',
  depth: 'Max. depth [%t]',
  length: 'Length [mm]',
  width: 'Width [mm]',
  dentDepth: 'Depth / height [%D]',
  markerName: 'Marker name',
  comment: 'Comment / Cluster ID',
} as const satisfies Record<MappedField, string>;

/**
 * A listing laid out as the POF pipe tally (metres, millimetres, depth in % of wall, dent depth in % of OD, clock as
 * h:mm). "Feature ID" and "Marker name" are this project's additions: the POF tally carries the id beside the feature
 * type and the marker's name in the identification text.
 */
export const POF_DEFAULT_PROFILE: ValidMappingProfile = validateMappingProfile({
  id: 'pof-100-default',
  name: 'POF 100 pipe tally (default)',
  vendor: 'Pipeline Operators Forum layout',
  columns: { ...POF_COLUMNS },
  units: { distance: 'm', sizes: 'mm', depth: 'PCT_WT', dentDepth: 'PCT_OD', clock: 'HH:MM' },
  events: { ...POF_EVENT_DICTIONARY },
});

/** A profile's dictionary as a lookup by normalised text. */
export function eventLookup(profile: ValidMappingProfile): ReadonlyMap<string, IliEventKind> {
  return new Map(Object.entries(profile.events).map(([text, kind]) => [normaliseEventText(text), kind]));
}

export function surfaceLookup(profile: ValidMappingProfile): ReadonlyMap<string, IliSurface> {
  return new Map(Object.entries(profile.surfaces ?? DEFAULT_SURFACE_NAMES).map(([text, surface]) => [normaliseEventText(text), surface]));
}
