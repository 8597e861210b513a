// Vite build of the dashboard SPA: services/dashboard → services/dashboard/dist (git-ignored), served by
// the web process at the base URL. `npm start` and `npm test` build it when missing or stale.
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root,
  base: '/',
  plugins: [preact()],
  logLevel: 'warn',
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, target: 'es2022' },
});
