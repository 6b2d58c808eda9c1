import type { IliMappingProfileResolvers } from '../generated/resolvers-types';

export const IliMappingProfile: IliMappingProfileResolvers = {
  definitionJson: (profile) => JSON.stringify(profile.definition),
};
