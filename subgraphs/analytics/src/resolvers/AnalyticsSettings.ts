import type { AnalyticsSettingsResolvers } from '../generated/resolvers-types';

/** The interaction rule is one value in TenantSettings (with its SPACING limits); the API shows its three parts. */
export const AnalyticsSettings: AnalyticsSettingsResolvers = {
  interactionRule: (s) => s.interaction.name,
  interactionAxialGapMm: (s) => s.interaction.axialGapMm ?? null,
  interactionCircumferentialGapMm: (s) => s.interaction.circumferentialGapMm ?? null,
};
