export { loadConfig, ConfigError, DEFAULT_CAPACITY, USAGE, type AirlockConfig } from './config';
export { createServices, type CreateServicesOptions, type CreatedServices } from './create-services';
export { startServer, type StartServerOptions, type RunningServer } from './start-server';
export { RequestGuard, type RequestGuardOptions, type GuardVerdict } from './http/request-guard';
export { StaticFiles, type StaticFilesOptions } from './http/static-files';
export { tokenMatches } from './http/token';
