import { z } from 'zod';
import { pageSize } from '@linepack/lib/pagination';
import { fieldError } from '@linepack/lib/errors';
import { validateInput } from '@linepack/lib/validation';
import type { QueryResolvers } from '../generated/resolvers-types';
import { B31GInputError, modifiedB31G } from '../model/b31g';

const positive = z.number().finite().gt(0, 'must be > 0');
const inputSchema = z
  .object({
    outsideDiameterMm: positive.max(5000, 'must be ≤ 5000 mm'),
    wallThicknessMm: positive,
    smysMpa: z.number().min(100, 'must be from 100 to 1000 MPa').max(1000, 'must be from 100 to 1000 MPa'),
    smtsMpa: z.number().min(100, 'must be from 100 to 1200 MPa').max(1200, 'must be from 100 to 1200 MPa').nullish(),
    defectDepthMm: z.number().finite().min(0, 'must be ≥ 0'),
    defectLengthMm: positive.max(100_000, 'must be ≤ 100000 mm'),
    regulation: z
      .enum(['CFR_192', 'CFR_195'])
      .nullish()
      .transform((v) => v ?? 'CFR_192'),
    classLocation: z.number().int('must be 1, 2, 3 or 4').min(1, 'must be 1, 2, 3 or 4').max(4, 'must be 1, 2, 3 or 4').nullish(),
    maopKpa: positive.max(50_000, 'must be ≤ 50000 kPa').nullish(),
    flowStress: z
      .enum(['SMYS_PLUS_69_MPA', 'SMYS_TIMES_1_1', 'MEAN_OF_SMYS_AND_SMTS'])
      .nullish()
      .transform((v) => v ?? 'SMYS_PLUS_69_MPA'),
  })
  .superRefine((v, ctx) => {
    if (v.wallThicknessMm >= v.outsideDiameterMm / 2)
      ctx.addIssue({ code: 'custom', path: ['wallThicknessMm'], message: 'must be less than half the outside diameter' });
    if (v.defectDepthMm >= v.wallThicknessMm)
      ctx.addIssue({
        code: 'custom',
        path: ['defectDepthMm'],
        message: 'must be less than the wall thickness (a through-wall defect has no remaining strength)',
      });
    if (v.smtsMpa != null && v.smtsMpa < v.smysMpa) ctx.addIssue({ code: 'custom', path: ['smtsMpa'], message: 'must not be less than smysMpa' });
    if (v.regulation === 'CFR_192' && v.classLocation == null)
      ctx.addIssue({ code: 'custom', path: ['classLocation'], message: 'is required for CFR_192 pipe (it selects the §192.111 design factor)' });
    if (v.flowStress === 'MEAN_OF_SMYS_AND_SMTS' && v.smtsMpa == null)
      ctx.addIssue({ code: 'custom', path: ['smtsMpa'], message: 'is required for the MEAN_OF_SMYS_AND_SMTS flow stress' });
  });

const nullFigures = {
  z: null,
  foliasFactor: null,
  flowStressMpa: null,
  failureStressMpa: null,
  failurePressureKpa: null,
  designFactor: null,
  safePressureKpa: null,
  erf: null,
  failurePressureRatio: null,
  designPressureKpa: null,
  notes: [],
};

export const Query: QueryResolvers = {
  modifiedB31G: (_parent, { input }) => {
    const values = validateInput(inputSchema, input);
    try {
      const result = modifiedB31G({ ...values, refuseMissingSmts: true });
      if (result.applicable) return { ...result, notApplicableReason: null };
      return { ...nullFigures, applicable: false, notApplicableReason: result.message, flowStressMethod: values.flowStress, modelVersion: result.modelVersion };
    } catch (err) {
      if (err instanceof B31GInputError) throw fieldError('BAD_USER_INPUT', `input.${err.field} ${err.message}`, { field: `input.${err.field}` });
      throw err;
    }
  },
  riskRegister: (_parent, { filter, first, after }, { analytics }) => analytics.register(filter ?? {}, pageSize(first), after),
  analyticsSettings: (_parent, _args, { settings }) => settings.get(),
  digList: (_parent, { filter, first, after }, { analytics }) => analytics.digList(filter ?? {}, pageSize(first), after),
};
