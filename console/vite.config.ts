import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * The console is served by the gateway at / (same origin as /graphql and /auth/*), so every asset is
 * bundled into dist/ and nothing is loaded from another origin at run time. `npm run dev` proxies the API
 * to a running gateway (LINEPACK_GATEWAY, default http://localhost:4000).
 */
const gateway = process.env['LINEPACK_GATEWAY'] ?? 'http://localhost:4000';

export default defineConfig({
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 2000,
    rolldownOptions: {
      // react-compiler-runtime (GraphiQL's) starts with "use no memo", which bundling drops harmlessly.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: {
    proxy: {
      '/auth': { target: gateway, changeOrigin: true },
      '/schema': { target: gateway, changeOrigin: true },
      '/graphql': {
        target: gateway,
        changeOrigin: true,
        // A browser opening /graphql gets the console's explorer, as the gateway serves it.
        bypass: (req) => (req.method === 'GET' && (req.headers.accept ?? '').includes('text/html') ? '/index.html' : undefined),
      },
    },
  },
});
