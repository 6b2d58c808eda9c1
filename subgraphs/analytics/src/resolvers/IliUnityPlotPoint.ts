import type { IliUnityPlotPointResolvers } from '../generated/resolvers-types';

export const IliUnityPlotPoint: IliUnityPlotPointResolvers = {
  olderMeasurement: (point) => ({ id: point.olderMeasurementId }),
  newerMeasurement: (point) => ({ id: point.newerMeasurementId }),
};
