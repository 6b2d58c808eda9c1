import type { IliUploadResolvers } from '../generated/resolvers-types';

export const IliUpload: IliUploadResolvers = {
  id: (upload) => upload._id,
};
