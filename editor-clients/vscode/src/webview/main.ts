/**
 * The chat panel page. Mirrors the host's state by applying the shared reducer to the host's
 * messages (messages.ts), renders it (each part of the page in its module: tabs, banner, MCP
 * servers, transcript, plan, composer), and sends user actions back with `postMessage`.
 */

import type { ToWebview } from '../shared/messages';
import { renderBanner, banner } from './banner';
import { composer, renderComposer } from './composer';
import { clear } from './dom';
import { formsBox, mcpBox, renderMcp } from './mcpView';
import { handle } from './messages';
import { post, setRenderer } from './panelState';
import { planBox, renderPlan } from './planView';
import { loadDraft } from './prompt';
import { header, renderTabs } from './tabs';
import { renderTranscript, transcript } from './transcriptView';

const app = document.getElementById('app') as HTMLElement;
clear(app);
app.append(header, banner, mcpBox, transcript, planBox, formsBox, composer);
app.removeAttribute('aria-busy');

function render(): void {
  renderTabs();
  renderBanner();
  renderMcp();
  renderTranscript();
  renderPlan();
  renderComposer();
}

setRenderer(render);

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const data = event.data as unknown;
  if (typeof data === 'object' && data !== null && typeof (data as { type?: unknown }).type === 'string') {
    handle(data as ToWebview);
  }
});

loadDraft();
render();
post({ type: 'ready' });
