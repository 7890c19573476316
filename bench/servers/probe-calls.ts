/** A cheap read-only call per namespace, with arguments valid on the empty state (bench and Inspector check). */
export const PROBE_CALLS: Record<string, [string, Record<string, unknown>]> = {
  filesystem: ['list_allowed_directories', {}],
  memory: ['read_graph', {}],
  git: ['git_status', {}],
  postgres: ['list_tables', {}],
  github: ['get_me', {}],
  chat: ['list_channels', {}],
  calendar: ['check_calendar', { date: '2026-01-01' }],
  travel: ['get_itinerary', {}],
  support: ['list_open_tickets', {}],
  shop: ['search_products', { query: 'cable' }],
};
