import { ILI_IMPORT_JOB } from '../ili/import-job';
import type { IliImportJob } from '../ili/documents';
import { previewUpload } from '../ili/preview';
import type { QueryResolvers } from '../generated/resolvers-types';

export const Query: QueryResolvers = {
  measurement: (_parent, { id }, { measurements }) => measurements.findById(id),
  iliRun: (_parent, { id }, { ili }) => ili.run(id),
  iliImport: async (_parent, { id }, { jobs, ili }) => {
    const job = await jobs.get(ili.tenantId, id);
    return job?.kind === ILI_IMPORT_JOB ? (job as IliImportJob) : null;
  },
  iliMappingProfiles: (_parent, _args, { ili }) => ili.listProfiles(),
  iliUploadPreview: (_parent, args, { ili, assetRefs }) => previewUpload(args, { ili, assetRefs }),
};
