// A URL slug from a name: ASCII letters and digits, dashes between words, at most 50 characters. Programs
// (their public page's /p/<slug>) and groups (`?group=<slug>`) derive theirs from their names with it.
export function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 50)
    .replace(/-+$/, '');
  return s === '' ? 'program' : s;
}
