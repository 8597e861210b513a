import { render } from 'preact';
import { PortalApp } from './app.tsx';
import { takeLinkToken } from './link-token.ts';
import '../style.css';
import './portal.css';

// First of all: an invite or sign-in link's token leaves the address bar (link-token.ts).
takeLinkToken();
render(<PortalApp />, document.getElementById('app')!);
