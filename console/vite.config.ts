import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { compression } from 'vite-plugin-compression2';

/**
 * The console is served by the gateway at / (same origin as /graphql and /auth/*), so every asset is
 * bundled into dist/ and nothing is loaded from another origin at run time. `npm run dev` proxies the API
 * to a running gateway (LINEPACK_GATEWAY, default http://localhost:4000).
 */
const gateway = process.env['LINEPACK_GATEWAY'] ?? 'http://localhost:4000';

/**
 * GraphiQL's stylesheet embeds its Roboto and Fira Code fonts as base64 WOFF2: 370 kB of its 418 kB, which no
 * compression shrinks. The console sets GraphiQL's font variables to its own (system) fonts (styles.css,
 * .explorer-frame), so those faces are never used: they are dropped from the build.
 */
function withoutGraphiqlFonts(): Plugin {
  return {
    name: 'linepack:graphiql-without-fonts',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]graphiql[\\/]dist[\\/]style\.css$/.test(id)) return null;
      return { code: code.replace(/@font-face\s*\{[^}]*\}/g, ''), map: null };
    },
  };
}

export default defineConfig({
  base: '/',
  plugins: [
    react(),
    withoutGraphiqlFonts(),
    // Every text file of the build also as .br and .gz beside it, compressed once here at the highest levels (Brotli 11,
    // gzip 9: seconds at build time, nothing per request); the gateway sends the one the browser accepts
    // (gateway/src/console.ts). Files under 1 kB are left as they are (a few hundred bytes to gain at most), and so is a
    // file whose compressed form would be no smaller.
    compression({ algorithms: ['brotliCompress', 'gzip'], threshold: 1024, skipIfLargerOrEqual: true, logLevel: 'silent' }),
  ],
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
