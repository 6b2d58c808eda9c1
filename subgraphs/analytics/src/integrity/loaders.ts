import DataLoader from 'dataloader';
import type { AssessmentDocument, FieldResultDocument, PressureReductionDocument, RepairDocument } from '../documents';
import type { DigRecordStore } from './records';
import type { AssessmentField } from '../selection';

/**
 * Batches what a page of assessments (the dig list, a segment's anomalies) asks of each row: its field result,
 * repair and pressure reductions cost one query each for the whole page rather than one per row.
 */
export interface DigLoaders {
  fieldResultById: DataLoader<string, FieldResultDocument | null>;
  repairById: DataLoader<string, RepairDocument | null>;
  pressureReductionsOf: DataLoader<string, PressureReductionDocument[]>;
  assessmentById: DataLoader<string, AssessmentDocument | null>;
  /** The same holding only `fields` (selection.ts, one array per selection; null: whole documents). */
  assessmentWith(fields: readonly AssessmentField[] | null): DataLoader<string, AssessmentDocument | null>;
}

/** Per request (they cache), on the request's tenant-scoped store. */
export function digLoaders(store: DigRecordStore): DigLoaders {
  const assessmentById = new DataLoader((ids: readonly string[]) => store.assessmentsByIds(ids));
  const projected = new Map<readonly AssessmentField[], DataLoader<string, AssessmentDocument | null>>();
  return {
    fieldResultById: new DataLoader((ids: readonly string[]) => store.fieldResultsByIds(ids)),
    repairById: new DataLoader((ids: readonly string[]) => store.repairsByIds(ids)),
    pressureReductionsOf: new DataLoader((ids: readonly string[]) => store.reductionsOfAnomalies(ids)),
    assessmentById,
    assessmentWith(fields) {
      if (!fields) return assessmentById;
      let loader = projected.get(fields);
      if (!loader) projected.set(fields, (loader = new DataLoader((ids: readonly string[]) => store.assessmentsByIds(ids, fields))));
      return loader;
    },
  };
}
