// The API reference at /docs, rendered from the service's own OpenAPI document (GET /api/v1/openapi.json):
// grouped by tag; per operation the method, path, summary, parameters, request body fields and responses.
// Readable without logging in. Schemas are shown as a flat list of fields, one level of nesting deep.
import { useEffect } from 'preact/hooks';
import { openApiDocument } from '../api.ts';
import { Show, Table } from '../widgets.tsx';
import { useLoad } from '../hooks.ts';

// The OpenAPI format's parts this page reads (OpenAPI 3.1), not an answer of svc's own routes.
interface Schema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  format?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  $ref?: string;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}
interface Operation {
  tags?: string[];
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
  security?: Record<string, string[]>[];
}
interface OpenApi {
  info?: { title?: string; description?: string; version?: string };
  tags?: { name: string; description?: string }[];
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function Docs() {
  useEffect(() => {
    document.title = 'API reference · svc';
  }, []);
  const doc = useLoad(async () => (await openApiDocument()) as OpenApi, []);
  return (
    <main class="docs">
      <p>
        <a href="/programs">Dashboard</a>
      </p>
      <Show loaded={doc}>{(d) => <Reference doc={d} />}</Show>
    </main>
  );
}

function Reference(props: { doc: OpenApi }) {
  const d = props.doc;
  const resolve = (s: Schema | undefined): Schema | undefined => {
    if (s?.$ref) return d.components?.schemas?.[s.$ref.split('/').pop() ?? ''];
    return s;
  };
  const groups = new Map<string, { method: string; path: string; op: Operation }[]>();
  for (const [path, ops] of Object.entries(d.paths ?? {})) {
    for (const method of METHODS) {
      const op = ops[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'other';
      if (!groups.has(tag)) groups.set(tag, []);
      groups.get(tag)!.push({ method, path, op });
    }
  }
  const tagOrder = [...(d.tags ?? []).map((t) => t.name), ...groups.keys()].filter(
    (t, i, a) => groups.has(t) && a.indexOf(t) === i,
  );
  const anchor = (method: string, path: string) =>
    `${method}-${path}`.replace(/[^a-zA-Z0-9]+/g, '-').replace(/-+$/, '');
  return (
    <>
      <h1>{d.info?.title ?? 'API'} reference</h1>
      {d.info?.description && <p>{text(d.info.description)}</p>}
      <p class="subtle">
        The machine-readable document: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.
      </p>
      <nav aria-label="Contents" class="docs-toc">
        {tagOrder.map((tag) => (
          <details open>
            <summary>{tag}</summary>
            <ul>
              {groups.get(tag)!.map(({ method, path, op }) => (
                <li>
                  <a href={`#${anchor(method, path)}`}>
                    <span class={`method ${method}`}>{method.toUpperCase()}</span>
                    {path}
                  </a>{' '}
                  <span class="subtle">{op.summary}</span>
                </li>
              ))}
            </ul>
          </details>
        ))}
      </nav>
      {tagOrder.map((tag) => (
        <section aria-labelledby={`tag-${tag}`}>
          <h2 id={`tag-${tag}`}>{tag}</h2>
          {d.tags?.find((t) => t.name === tag)?.description && (
            <p>{text(d.tags.find((t) => t.name === tag)!.description)}</p>
          )}
          {groups.get(tag)!.map(({ method, path, op }) => (
            <article class="op" id={anchor(method, path)}>
              <h3>
                <span class={`method ${method}`}>{method.toUpperCase()}</span>
                <code>{path}</code>
              </h3>
              {op.summary && <p>{text(op.summary)}</p>}
              {op.description && <p class="subtle">{text(op.description)}</p>}
              {op.security && op.security.length > 0 && (
                <p class="subtle">Credentials: {op.security.flatMap((s) => Object.keys(s)).join(' or ')}</p>
              )}
              {op.parameters && op.parameters.length > 0 && (
                <Fields
                  caption="Parameters"
                  rows={op.parameters.map((p) => ({
                    name: p.name,
                    where: p.in,
                    required: p.required === true,
                    schema: resolve(p.schema),
                    description: p.description ?? resolve(p.schema)?.description,
                  }))}
                />
              )}
              {op.requestBody?.content &&
                Object.entries(op.requestBody.content).map(([type, c]) => (
                  <SchemaFields
                    caption={`Request body (${type})`}
                    schema={resolve(c.schema)}
                    resolve={resolve}
                  />
                ))}
              {op.responses && (
                <Table caption="Responses" columns={['Status', 'Meaning and fields']}>
                  {Object.entries(op.responses).map(([code, r]) => {
                    const schema = resolve(Object.values(r.content ?? {})[0]?.schema);
                    return (
                      <tr>
                        <th scope="row">{code}</th>
                        <td>
                          {r.description === 'Default Response' ? '' : text(r.description)}
                          {schema && <span class="subtle"> {shapeOf(schema, resolve)}</span>}
                        </td>
                      </tr>
                    );
                  })}
                </Table>
              )}
            </article>
          ))}
        </section>
      ))}
    </>
  );
}

/** The document's descriptions use `backticks` for code: rendered as <code>, the rest as text. */
function text(s: string | undefined) {
  if (!s) return null;
  return s.split('`').map((part, i) => (i % 2 === 1 ? <code>{part}</code> : part));
}

function typeOf(s: Schema | undefined): string {
  if (!s) return '';
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return alts.map(typeOf).join(' | ');
  const t = Array.isArray(s.type) ? s.type.join(' | ') : (s.type ?? 'any');
  if (t === 'array' && s.items) return `array of ${typeOf(s.items)}`;
  return s.format ? `${t} (${s.format})` : t;
}

function limits(s: Schema | undefined): string {
  if (!s) return '';
  const out: string[] = [];
  if (s.minimum !== undefined) out.push(`min ${s.minimum}`);
  if (s.maximum !== undefined) out.push(`max ${s.maximum}`);
  if (s.default !== undefined) out.push(`default ${JSON.stringify(s.default)}`);
  return out.join(', ');
}

/** A short description of a response body: its top-level fields, and data's fields one level down. */
function shapeOf(s: Schema, resolve: (s: Schema | undefined) => Schema | undefined): string {
  if (!s.properties) return typeOf(s) === 'any' ? '' : `(${typeOf(s)})`;
  const parts = Object.entries(s.properties).map(([k, v]) => {
    const r = resolve(v);
    const inner = r?.type === 'array' ? resolve(r.items) : r;
    if (inner?.properties && k === 'data') {
      return `${k}${r?.type === 'array' ? '[]' : ''} { ${Object.keys(inner.properties).join(', ')} }`;
    }
    return k;
  });
  return `{ ${parts.join(', ')} }`;
}

interface FieldRow {
  name: string;
  where?: string;
  required: boolean;
  schema?: Schema;
  description?: string;
}

function SchemaFields(props: {
  caption: string;
  schema: Schema | undefined;
  resolve: (s: Schema | undefined) => Schema | undefined;
}) {
  const s = props.schema;
  if (!s?.properties)
    return (
      <p>
        {props.caption}: {typeOf(s)}
      </p>
    );
  const rows: FieldRow[] = [];
  for (const [name, raw] of Object.entries(s.properties)) {
    const f = props.resolve(raw);
    rows.push({
      name,
      required: s.required?.includes(name) ?? false,
      schema: f,
      description: f?.description,
    });
    const nested = f?.type === 'array' ? props.resolve(f.items) : f;
    for (const [sub, subRaw] of Object.entries(nested?.properties ?? {})) {
      const g = props.resolve(subRaw);
      rows.push({
        name: `${name}${f?.type === 'array' ? '[]' : ''}.${sub}`,
        required: nested?.required?.includes(sub) ?? false,
        schema: g,
        description: g?.description,
      });
    }
  }
  return <Fields caption={props.caption} rows={rows} />;
}

function Fields(props: { caption: string; rows: FieldRow[] }) {
  const showWhere = props.rows.some((r) => r.where);
  return (
    <Table caption={props.caption} columns={['Name', showWhere && 'In', 'Type', 'Required', 'Notes']}>
      {props.rows.map((r) => (
        <tr>
          <th scope="row">
            <code>{r.name}</code>
          </th>
          {showWhere && <td>{r.where}</td>}
          <td>{typeOf(r.schema)}</td>
          <td>{r.required ? 'yes' : 'no'}</td>
          <td>{text([r.description?.replace(/\.$/, ''), limits(r.schema)].filter(Boolean).join('; '))}</td>
        </tr>
      ))}
    </Table>
  );
}
