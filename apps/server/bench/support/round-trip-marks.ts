// Put into a running server through its inspector (Runtime.evaluate); nothing of it is in the server's code.
/** Marks, in the server, when a confirm arrives and when a frame with a tool-end (or a tool-decision) is written. */
export const ROUND_TRIP_MARKS = `(() => {
  const { EventEmitter } = process.getBuiltinModule('node:events');
  const { Socket } = process.getBuiltinModule('node:net');
  const marks = (globalThis.__benchMarks = { confirm: [], decision: [], toolEnd: [] });
  const now = () => Number(process.hrtime.bigint() / 1000n);
  const emit = EventEmitter.prototype.emit;
  // The server's sockets are of a subclass of ws's WebSocket (the close grace), so the chain is walked.
  const isWebSocket = (target) => {
    for (let at = target.constructor; typeof at === 'function' && at !== EventEmitter; at = Object.getPrototypeOf(at)) if (at.name === 'WebSocket') return true;
    return false;
  };
  EventEmitter.prototype.emit = function (event, data) {
    if (event === 'message' && isWebSocket(this) && Buffer.isBuffer(data) && data.length > 40 && data.includes('chat.confirmTool')) marks.confirm.push(now());
    return emit.apply(this, arguments);
  };
  const seen = (chunk) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('latin1') : '';
    if (text.includes('"tool-decision"')) marks.decision.push(now());
    if (text.includes('"tool-end"')) marks.toolEnd.push(now());
  };
  const writev = Socket.prototype._writev;
  Socket.prototype._writev = function (chunks, cb) {
    for (const { chunk } of chunks) seen(chunk);
    return writev.call(this, chunks, cb);
  };
  const write = Socket.prototype._write;
  Socket.prototype._write = function (chunk, encoding, cb) {
    seen(chunk);
    return write.call(this, chunk, encoding, cb);
  };
})()`;
