import { z } from 'zod';
import { validateInput } from '@linepack/lib/validation';
import type { QueryResolvers } from '../generated/resolvers-types';
import { modifiedB31G } from '../modified-b31g';

const positive = z.number().finite().gt(0, 'must be > 0');
const inputSchema = z
  .object({
    outsideDiameterMm: positive.max(5000, 'must be ≤ 5000 mm'),
    wallThicknessMm: positive,
    smysMpa: z.number().min(100, 'must be from 100 to 1000 MPa').max(1000, 'must be from 100 to 1000 MPa'),
    defectDepthMm: z.number().finite().min(0, 'must be ≥ 0'),
    defectLengthMm: positive,
    classLocation: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4)], { error: 'must be 1, 2, 3 or 4' }).default(1),
    maopKpa: positive.nullish().transform((v) => v ?? null),
  })
  .superRefine((v, ctx) => {
    if (v.wallThicknessMm >= v.outsideDiameterMm / 2) {
      ctx.addIssue({ code: 'custom', path: ['wallThicknessMm'], message: 'must be less than half the outside diameter' });
    }
    if (v.defectDepthMm >= v.wallThicknessMm) {
      ctx.addIssue({
        code: 'custom',
        path: ['defectDepthMm'],
        message: 'must be less than the wall thickness (a through-wall defect has no remaining strength)',
      });
    }
  });

export const Query: QueryResolvers = {
  modifiedB31G: (_parent, { input }) => modifiedB31G(validateInput(inputSchema, input)),
};
