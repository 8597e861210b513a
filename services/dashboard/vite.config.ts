// Vite build of the dashboard SPA: services/dashboard → services/dashboard/dist (git-ignored), served by
// the web process at the base URL. `npm start` and `npm test` build it when missing or stale. Two entries:
// index.html (the advertiser dashboard) and partner.html (the partner portal at /partner/ and the public
// program pages at /p/<slug>); what they share (Preact, the API client, hooks and widgets, the chart) goes to shared chunks.
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root,
  base: '/',
  plugins: [preact()],
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    rollupOptions: { input: { index: join(root, 'index.html'), partner: join(root, 'partner.html') } },
  },
});
