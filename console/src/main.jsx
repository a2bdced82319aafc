// The console's entry: its styles and the app, mounted on #app.
import { render } from 'preact';
import { App } from './app.jsx';
import './style.css';

render(<App />, document.getElementById('app'));
