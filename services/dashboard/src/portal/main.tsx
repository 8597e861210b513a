import { render } from 'preact';
import { PortalApp } from './app.tsx';
import '../style.css';
import './portal.css';

render(<PortalApp />, document.getElementById('app')!);
