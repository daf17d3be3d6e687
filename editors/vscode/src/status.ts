// The status-bar model: what the item shows for the server's `mercury/status` states.

export type State = 'starting' | 'loading' | 'ready' | 'error' | 'disabled' | 'stopped';

export interface StatusView { text: string; tooltip: string; error: boolean }

const ICONS: Record<State, string> = {
  starting: '$(loading~spin)', loading: '$(loading~spin)', ready: '$(sparkle)', error: '$(error)',
  disabled: '$(circle-slash)', stopped: '$(debug-stop)',
};

/** `mercury/status` params: {state, message, engine?}. Unknown states read as 'starting'. */
export function fromNotification(params: { state?: string; message?: string } | undefined): {
  state: State; message: string;
} {
  const known: State[] = ['loading', 'ready', 'error'];
  const state = known.includes(params?.state as State) ? (params?.state as State) : 'starting';
  return { state, message: params?.message ?? '' };
}

export function view(state: State, message = ''): StatusView {
  const label = state === 'ready' ? 'mercury' : `mercury: ${state}`;
  const tip = state === 'disabled' ? 'mercury-lsp is disabled (click to enable)'
    : `mercury-lsp: ${message || state} (click to ${state === 'error' ? 'show the log' : 'disable'})`;
  return { text: `${ICONS[state]} ${label}`, tooltip: tip, error: state === 'error' };
}
