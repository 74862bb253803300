/**
 * Entry point: wires the language client, the chat panel, approvals and review, the
 * diagnostics bridge, commands and the status bar. One server per window, for all folders.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { bufferBlock, explainPrompt, fixPrompt, fileLabel } from './commands';
import { initializationOptions, readSettings } from './config';
import { ChatController } from './controller';
import { DiagnosticsBridge } from './diagnostics/bridge';
import { CHAT_VIEW_ID, ChatViewProvider } from './panel/chatViewProvider';
import { PermissionBroker } from './permissions/broker';
import { isChoice, pickChoice } from './permissions/choice';
import { ProposalStore } from './review/proposalStore';
import { ReviewController } from './review/reviewController';
import { AgentClient, type ClientFactory } from './server/agentClient';
import { locateServer } from './server/locate';
import { ServerCommands } from './shared/protocol';
import { DEFAULT_MODES } from './shared/state';
import { AgentStatusBar } from './statusBar';
import { didChangeFiles, saveDocuments } from './workspaceHandlers';

/**
 * The extension's own commands. None may equal a command the server advertises
 * (`ServerCommands`: the language client registers those under the same ids, and VS Code
 * refuses a second registration), hence `lspAgent.chat.*` for the chat's editor commands.
 */
export const Commands = {
  newChat: 'lspAgent.newChat',
  fixWithAgent: 'lspAgent.chat.fixWithAgent',
  explainSelection: 'lspAgent.chat.explainSelection',
  cancel: 'lspAgent.cancel',
  switchMode: 'lspAgent.switchMode',
  showLog: 'lspAgent.showLog',
  openPanel: 'lspAgent.openPanel',
  restartServer: 'lspAgent.restartServer',
} as const;

/**
 * "Ask agent about selection" (the server's `lspAgent.askAgent` code action) carries no question:
 * ask for one. Escape cancels the action; an empty answer lets the server use its default
 * ("Explain what this code does."). Other commands run unchanged.
 */
async function askAgentQuestion(command: string, args: unknown[]): Promise<unknown[] | undefined> {
  const [first, ...rest] = args;
  if (command !== ServerCommands.askAgent || typeof first !== 'object' || first === null || 'question' in first) return args;
  const question = await vscode.window.showInputBox({
    title: 'lsp-agent: ask about the selection',
    prompt: 'Your question (empty: explain what the code does)',
    placeHolder: 'Explain what this code does.',
    ignoreFocusOut: true,
  });
  if (question === undefined) return undefined;
  return [question.trim() ? { ...first, question: question.trim() } : first, ...rest];
}

/** What `activate` returns: the parts, for other extensions and for tests. */
export interface ExtensionApi {
  client: AgentClient;
  controller: ChatController;
  broker: PermissionBroker;
  review: ReviewController;
  chatView: ChatViewProvider;
  store: ProposalStore;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

const defaultFactory: ClientFactory = (id, name, serverOptions, clientOptions) =>
  new LanguageClient(id, name, serverOptions, clientOptions);

/** `createClient` lets tests drive the real LanguageClient against a server they choose. */
export function activate(context: vscode.ExtensionContext, createClient: ClientFactory = defaultFactory): ExtensionApi {
  const log = vscode.window.createOutputChannel('lsp-agent', { log: true });
  const settings = () => readSettings(vscode.workspace.getConfiguration('lspAgent'));
  const broker = new PermissionBroker();
  // The client's handlers and the view need the controller, which needs both: break the cycle.
  const ref: { controller?: ChatController } = {};

  const client = new AgentClient({
    log,
    createClient,
    locate: () =>
      locateServer(settings().server, {
        pathVar: process.env.PATH ?? '',
        platform: process.platform,
        homeDir: os.homedir(),
        workspaceFolders: vscode.workspace.workspaceFolders?.map((f) => f.uri.fsPath) ?? [],
        isExecutable,
      }),
    env: () => settings().server.env,
    initializationOptions: () => initializationOptions(settings(), vscode.workspace.isTrusted),
    handlers: {
      onUpdate: (params) => ref.controller?.onUpdate(params),
      sessionDidStart: (params) => ref.controller?.onSessionStarted(params),
      sessionDidEnd: (params) => ref.controller?.onSessionEnded(params),
      commandArguments: (command, args) => askAgentQuestion(command, args),
      requestPermission: (params, token) => (isChoice(params) ? pickChoice(params, token) : broker.request(params, token)),
      saveDocuments: (params) => saveDocuments(params, log),
      didChangeFiles: (params) => didChangeFiles(params, log),
      mcpDidChange: (params) => ref.controller?.mcpChanged(params),
      mcpElicit: (params, token) => ref.controller?.mcpElicit(params, token) ?? Promise.resolve({ action: 'cancel' as const }),
    },
  });

  const store = new ProposalStore();
  const review = new ReviewController(store, broker, {
    log,
    // Every protocol-1 server takes `editedText`; an older one is refused at the handshake.
    editedProposalsSupported: () => client.capabilities !== undefined,
  });
  const chatView = new ChatViewProvider(context.extensionUri, (message) => void ref.controller?.handle(message), log);
  const statusBar = new AgentStatusBar(Commands.openPanel);

  const runAction = async (id: string): Promise<void> => {
    switch (id) {
      case 'configureServer':
        await vscode.commands.executeCommand('workbench.action.openSettings', 'lspAgent.server');
        return;
      case 'showLog':
        log.show(true);
        return;
      case 'restartServer':
        await client.restart();
        return;
      case 'openInstallGuide':
        await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.joinPath(context.extensionUri, 'README.md'));
        return;
      case 'trustWorkspace':
        await vscode.commands.executeCommand('workbench.trust.manage');
        return;
    }
  };

  const controller = new ChatController({
    client,
    broker,
    review,
    post: (m) => chatView.post(m),
    reveal: (focus) => chatView.reveal(focus),
    panelVisible: () => chatView.visible,
    setBadge: (n) => chatView.setBadge(n),
    memento: context.workspaceState,
    log,
    defaultMode: () => settings().permissionMode,
    chosenMode: () => (settings().permissionModeChosen ? settings().permissionMode : undefined),
    runAction,
  });
  ref.controller = controller;

  const refreshStatus = (): void => statusBar.update(client.status, controller.active, controller.pendingCount());
  refreshStatus();

  const bridge = new DiagnosticsBridge({
    onDidChangeDiagnostics: (listener) => vscode.languages.onDidChangeDiagnostics((e) => listener(e.uris)),
    getDiagnostics: (uri) => vscode.languages.getDiagnostics(vscode.Uri.parse(uri)),
    documentVersion: (uri) => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri)?.version ?? null,
    send: (params) => client.sendDiagnostics(params),
    debounceMs: () => settings().diagnosticsDebounceMs,
    enabled: () => settings().diagnosticsBridge,
    setTimer: (fn, ms) => {
      const handle = setTimeout(fn, ms);
      return { dispose: () => clearTimeout(handle) };
    },
  });

  const pickModeFor = async (): Promise<void> => {
    const session = controller.active;
    const modes = session?.availableModes ?? DEFAULT_MODES;
    const pick = await vscode.window.showQuickPick(
      modes.map((m) => ({ label: m.name, description: m.id === session?.modeId ? '(current)' : '', detail: m.description, id: m.id })),
      { title: 'lsp-agent: permission mode', placeHolder: 'How much may the agent do without asking?' },
    );
    if (!pick) return;
    if (session) await controller.setMode(session.id, pick.id);
    else await vscode.workspace.getConfiguration('lspAgent').update('permissionMode', pick.id, vscode.ConfigurationTarget.Workspace);
  };

  const fixWithAgent = async (arg?: unknown): Promise<void> => {
    // From a code action: {uri, range?, diagnostics?}; from the palette: the cursor's problems.
    const given = typeof arg === 'object' && arg !== null ? (arg as { uri?: string; diagnostics?: unknown[] }) : undefined;
    const editor = vscode.window.activeTextEditor;
    const uri = given?.uri ? vscode.Uri.parse(given.uri) : editor?.document.uri;
    if (!uri) {
      void vscode.window.showInformationMessage('Open a file with problems to fix.');
      return;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    let problems = vscode.languages.getDiagnostics(uri);
    if (!given?.diagnostics && editor && editor.document.uri.toString() === uri.toString()) {
      const sel = editor.selection;
      const atCursor = problems.filter((d) => d.range.intersection(new vscode.Range(sel.start.line, 0, sel.end.line + 1, 0)) !== undefined);
      problems = atCursor.length > 0 ? atCursor : problems;
    }
    const wire = given?.diagnostics
      ? (given.diagnostics as { message: string; severity?: number; source?: string; code?: string | number; range: { start: { line: number; character: number }; end: { line: number; character: number } } }[]).map((d) => ({
          ...d,
          severity: (d.severity ?? 1) - 1,
        }))
      : problems.map((d) => ({
          message: d.message,
          severity: d.severity,
          ...(d.source ? { source: d.source } : {}),
          ...(d.code !== undefined ? { code: typeof d.code === 'object' ? d.code.value : d.code } : {}),
          range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
        }));
    if (wire.length === 0) {
      void vscode.window.showInformationMessage('No problems here to fix.');
      return;
    }
    const label = fileLabel(uri.fsPath, vscode.workspace.asRelativePath(uri));
    const first = wire[0] as (typeof wire)[number];
    const last = wire[wire.length - 1] as (typeof wire)[number];
    await chatView.reveal(true);
    await controller.prompt({
      text: fixPrompt(label, wire),
      mentions: [],
      includeSelection: false,
      extraBlocks: [bufferBlock(uri.toString(), doc.getText(), { start: first.range.start, end: last.range.end })],
      extraAttachments: [{ label, uri: uri.toString() }],
    });
  };

  const explainSelection = async (): Promise<void> => {
    const editor = vscode.window.activeTextEditor;
    const block = controller.currentSelectionBlock(editor);
    if (!editor || !block) {
      void vscode.window.showInformationMessage('Select some code to explain.');
      return;
    }
    const label = fileLabel(editor.document.uri.fsPath, vscode.workspace.asRelativePath(editor.document.uri));
    await chatView.reveal(true);
    await controller.prompt({
      text: explainPrompt(label, block.range.start.line + 1, block.range.end.line + 1),
      mentions: [],
      includeSelection: false,
      extraBlocks: [{ type: 'resource', resource: { uri: block.uri, text: block.text }, _meta: { range: block.range } }],
      extraAttachments: [{ label: block.label, uri: block.uri }],
    });
  };

  let selectionTimer: NodeJS.Timeout | undefined;
  const onSelection = (): void => {
    if (selectionTimer) clearTimeout(selectionTimer);
    selectionTimer = setTimeout(() => controller.updateSelection(vscode.window.activeTextEditor), 150);
  };

  context.subscriptions.push(
    log,
    broker,
    client,
    store,
    store.register(),
    review,
    chatView,
    statusBar,
    controller,
    bridge,
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView),
    client.onDidChangeStatus((status) => {
      refreshStatus();
      if (status.phase === 'running') {
        // A new server process has no diagnostics yet.
        bridge.resend(vscode.languages.getDiagnostics().map(([uri]) => uri.toString()));
      }
    }),
    controller.onDidChange(refreshStatus),
    vscode.commands.registerCommand(Commands.newChat, async () => {
      await chatView.reveal(true);
      await controller.newSession();
      controller.activate(controller.active?.id ?? '');
      chatView.post({ type: 'focusPrompt' });
    }),
    vscode.commands.registerCommand(Commands.fixWithAgent, fixWithAgent),
    vscode.commands.registerCommand(Commands.explainSelection, explainSelection),
    vscode.commands.registerCommand(Commands.cancel, () => controller.cancel()),
    vscode.commands.registerCommand(Commands.switchMode, pickModeFor),
    vscode.commands.registerCommand(Commands.showLog, () => log.show(true)),
    vscode.commands.registerCommand(Commands.openPanel, () => chatView.reveal(true)),
    vscode.commands.registerCommand(Commands.restartServer, () => client.restart()),
    vscode.window.onDidChangeTextEditorSelection(onSelection),
    vscode.window.onDidChangeActiveTextEditor(onSelection),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      // The running server follows at once (from its next turn): the project's CLAUDE.md and
      // other memory files, settings and MCP servers. Workspace hooks (lspAgent.hooks.trusted)
      // are decided at initialize, so they wait for the next server start.
      void client.setTrusted(true).then((told) => {
        if (told) log.info('workspace trusted: told the running server');
      });
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('lspAgent.mcpServers')) {
        void client.setMcpServers(settings().mcpServers);
      }
      if (e.affectsConfiguration('lspAgent.server') || e.affectsConfiguration('lspAgent.model') || e.affectsConfiguration('lspAgent.verificationMode') || e.affectsConfiguration('lspAgent.hooks')) {
        if (controller.allSessions.some((s) => s.running)) {
          void vscode.window.showInformationMessage('lsp-agent settings changed; they apply after a server restart.', 'Restart now').then((c) => (c ? client.restart() : undefined));
        } else if (client.status.phase !== 'stopped') {
          void client.restart();
        }
      }
    }),
    { dispose: () => selectionTimer && clearTimeout(selectionTimer) },
  );

  if (vscode.workspace.getConfiguration('lspAgent').get<boolean>('server.autoStart', true)) {
    void client.start();
  }
  return { client, controller, broker, review, chatView, store };
}

export function deactivate(): void {
  // Everything is in context.subscriptions; VS Code disposes it.
}
