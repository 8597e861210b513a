// What a pure input rule threw, as "<status> <message>", so a test compares it with the exact spec string.
import { HttpError } from '../../shared/http/server.ts';

export function errorOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof HttpError ? `${err.statusCode} ${err.message}` : String(err);
  }
}
