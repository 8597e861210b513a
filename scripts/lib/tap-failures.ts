// The failures of a tap run, gathered from its TAP output as it streams, for a summary at the end: a CI log
// cut to its last lines still names every failed assertion with its file, line and diff.
// A subtest's or file's own "not ok" that follows a failed child is left out (the child names the failure);
// a file that failed with no failed assertion in it (a crash, a timeout) is named by itself.

const MAX_LINES = 100;
const DETAIL_LINES = 6;

interface Pending {
  name: string;
  indent: number;
  line?: string;
  detail: string[];
}

export class FailureLog {
  private partial = '';
  private file = '';
  private lastIndent = -1;
  private lines: string[] = [];
  private pending: Pending | undefined;
  private block: 'diff' | 'stack' | undefined;

  feed(chunk: string): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.line(line);
  }

  private line(line: string): void {
    const file = /^# Subtest: (\S+\.test\.tsx?)$/.exec(line);
    if (file) {
      this.flush();
      this.file = file[1]!;
      this.lastIndent = -1;
      return;
    }
    const failed = /^(\s*)not ok \d+ - (.*?)(?: # time=.*)?$/.exec(line);
    if (failed) {
      this.flush();
      const indent = failed[1]!.length;
      // A parent's "not ok" right after its failed child's: the child already said it.
      const parent = this.lastIndent > indent;
      this.lastIndent = indent;
      if (!parent) this.pending = { name: failed[2]!, indent, detail: [] };
      return;
    }
    const p = this.pending;
    if (!p) return;
    const trimmed = line.trim();
    if (trimmed === '...' && line.length - line.trimStart().length === p.indent + 2) return this.flush();
    if (!p.line) p.line = /^lineNumber: (\d+)$/.exec(trimmed)?.[1];
    const block = /^(diff|stack): \|$/.exec(trimmed);
    if (block) this.block = block[1] as 'diff' | 'stack';
    else if (/^[a-zA-Z]+:( |$)/.test(trimmed)) {
      this.block = undefined;
      if (/^(message|error|signal|exitCode|found|wanted): /.test(trimmed)) p.detail.push(trimmed);
    } else if (this.block === 'stack' && trimmed) {
      // The stack's first frame is where it was thrown; the rest is tap's own.
      p.detail.push(`at ${trimmed}`);
      this.block = undefined;
    } else if (this.block === 'diff' && trimmed && !/^(---|\+\+\+|@@)/.test(trimmed)) p.detail.push(trimmed);
  }

  private flush(): void {
    const p = this.pending;
    this.pending = undefined;
    this.block = undefined;
    if (!p) return;
    const where = p.indent === 0 ? p.name : `${this.file}${p.line ? `:${p.line}` : ''}: ${p.name}`;
    const detail = p.detail.slice(0, DETAIL_LINES).map((d) => `    ${d.slice(0, 200)}`);
    this.lines.push(where, ...detail);
  }

  summary(): string {
    this.flush();
    const shown = this.lines.slice(0, MAX_LINES);
    if (this.lines.length > MAX_LINES) shown.push(`… and ${this.lines.length - MAX_LINES} more lines`);
    return shown.join('\n');
  }
}
