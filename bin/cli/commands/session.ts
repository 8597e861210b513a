// svc login, logout, signup: a dashboard session for the CLI, kept per base URL (context.ts remember).
import { anonymous, api, base, forget, given, o, prompt, remember, show } from '../context.ts';
import type { Commands } from '../context.ts';

export const sessionCommands: Commands = {
  async login() {
    const password = o.password ?? process.env.SVC_PASSWORD ?? (await prompt('Password: '));
    const r = await anonymous.POST('/api/auth/login', { body: { email: given(o.email), password } });
    await remember(r.data.session_token);
    return show(
      o.json ? r : { data: { logged_in: base, expires_at: r.data.expires_at } },
      o.json ? undefined : ['logged_in', 'expires_at'],
    );
  },
  async logout() {
    await api.POST('/api/auth/logout');
    await forget();
    return show({ data: { logged_out: base } }, ['logged_out']);
  },
  async signup() {
    const password = o.password ?? process.env.SVC_PASSWORD ?? (await prompt('Password (10+ characters): '));
    const body = { email: given(o.email), password, name: o.name, workspace_name: o.workspace };
    return show(await anonymous.POST('/api/auth/signup', { body }));
  },
};
