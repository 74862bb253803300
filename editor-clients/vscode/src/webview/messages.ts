/** The host's messages to the panel, applied to the page's state (the shared reducer). */

import type { PanelSnapshot, ToWebview } from '../shared/messages';
import { addNotice, addPermission, applyUpdate, endTurn, resolvePermission, startTurn, type SessionState } from '../shared/state';
import { closeMcpForm, showMcpForm } from './mcpView';
import { NEW_DRAFT, scheduleRender, state } from './panelState';
import { showMentionResults } from './popup';
import { autosize, dropDraft, loadDraft, promptBox, saveDraft } from './prompt';
import { renderSessionList } from './tabs';
import { invalidateTranscript } from './transcriptView';

function addSession(session: SessionState, activateIt: boolean): void {
  if (!state.sessions.has(session.id)) state.order.push(session.id);
  state.sessions.set(session.id, session);
  if (activateIt || !state.activeId) {
    if (!state.activeId) {
      // Carry a draft typed before the first chat existed.
      const draft = state.ui.drafts[NEW_DRAFT];
      if (draft) state.ui.drafts[session.id] = draft;
      dropDraft(NEW_DRAFT);
    } else {
      saveDraft();
    }
    state.activeId = session.id;
    loadDraft();
  }
}

function applySnapshot(snapshot: PanelSnapshot): void {
  state.sessions.clear();
  state.order = [];
  for (const s of snapshot.sessions) {
    state.sessions.set(s.id, s);
    state.order.push(s.id);
  }
  state.activeId = snapshot.activeSessionId ?? state.order[0];
  state.server = snapshot.server;
  state.history = snapshot.history;
  state.selection = snapshot.selection;
  state.editedProposals = snapshot.editedProposals;
  state.mcpServers = snapshot.mcpServers ?? [];
  invalidateTranscript();
  loadDraft();
}

export function handle(message: ToWebview): void {
  switch (message.type) {
    case 'snapshot':
      applySnapshot(message.snapshot);
      break;
    case 'sessionAdded':
      addSession(message.session, message.activate);
      break;
    case 'sessionActivated':
      if (message.sessionId !== state.activeId && state.sessions.has(message.sessionId)) {
        saveDraft();
        state.activeId = message.sessionId;
        loadDraft();
      }
      break;
    case 'sessionClosed':
      state.sessions.delete(message.sessionId);
      state.order = state.order.filter((id) => id !== message.sessionId);
      dropDraft(message.sessionId);
      if (state.activeId === message.sessionId) state.activeId = state.order[state.order.length - 1];
      loadDraft();
      break;
    case 'sessionUpdate': {
      const s = state.sessions.get(message.sessionId);
      if (s) applyUpdate(s, message.update);
      break;
    }
    case 'turnStarted': {
      const s = state.sessions.get(message.sessionId);
      if (s) startTurn(s, message.text, message.attachments);
      break;
    }
    case 'turnEnded': {
      const s = state.sessions.get(message.sessionId);
      if (s) endTurn(s, message.result);
      break;
    }
    case 'permissionRequested': {
      const r = message.request;
      const s = state.sessions.get(r.sessionId);
      if (s) addPermission(s, message.requestId, r);
      break;
    }
    case 'permissionResolved': {
      const s = state.sessions.get(message.sessionId);
      if (s) {
        resolvePermission(s, message.requestId, {
          state: message.state,
          ...(message.chosen ? { chosen: message.chosen } : {}),
          ...(message.feedback ? { feedback: message.feedback } : {}),
          ...(message.edited ? { edited: true } : {}),
          ...(message.scope ? { scope: message.scope } : {}),
        });
      }
      state.scopes.delete(message.requestId);
      break;
    }
    case 'serverStatus':
      state.server = message.status;
      break;
    case 'history':
      state.history = message.history;
      break;
    case 'selection':
      state.selection = message.selection;
      break;
    case 'mentionResults':
      showMentionResults(message.query, message.items);
      return;
    case 'notice': {
      const s = message.sessionId ? state.sessions.get(message.sessionId) : undefined;
      if (s) addNotice(s, message.level, message.text);
      else state.globalNotices = [...state.globalNotices.slice(-2), { level: message.level, text: message.text }];
      break;
    }
    case 'sessionList':
      renderSessionList(message.sessions);
      return;
    case 'mcpServers':
      state.mcpServers = message.servers;
      break;
    case 'mcpForm':
      showMcpForm(message.form);
      return;
    case 'mcpFormClosed':
      closeMcpForm(message.formId);
      return;
    case 'focusPrompt':
      if (message.text !== undefined) {
        promptBox.value = message.text;
        autosize();
      }
      promptBox.focus();
      break;
  }
  scheduleRender();
}
