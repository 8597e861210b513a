// Moved to modules/auth/access.ts (request checks) and modules/auth/service.ts (the rules); this file
// keeps the old import path working until every module imports from there.
export * from './modules/auth/access.ts';
