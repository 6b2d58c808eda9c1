/**
 * Mulberry32: a small, fast, seedable generator in [0, 1) — the same sequence for the same seed on every machine, so
 * a randomized test or a synthetic data set can be replayed from its seed. Quality is ample for both.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 0x9e3779b9;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
