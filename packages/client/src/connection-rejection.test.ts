import { describe, expect, it } from 'vitest';
import { connectionRejection } from './connection-rejection';

describe('connectionRejection', () => {
  it('recognises the error the server sends before closing an unauthorised socket', () => {
    const message = JSON.stringify({ id: null, error: { message: 'a valid access token is required', code: -32001, data: { code: 'UNAUTHORIZED', httpStatus: 401 } } });
    expect(connectionRejection(message)).toBe('a valid access token is required');
  });

  it('ignores answers to requests and other connection errors', () => {
    expect(connectionRejection(JSON.stringify({ id: 3, error: { message: 'x', data: { code: 'UNAUTHORIZED' } } }))).toBeNull();
    expect(connectionRejection(JSON.stringify({ id: null, error: { message: 'x', data: { code: 'PARSE_ERROR' } } }))).toBeNull();
    expect(connectionRejection('{"id":null,')).toBeNull();
    expect(connectionRejection('PONG')).toBeNull();
  });
});
