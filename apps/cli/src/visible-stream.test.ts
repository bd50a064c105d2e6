import { describe, expect, it } from 'vitest';
import { toVisibleProse, type VisibleText } from '@airlock/core';
import { showVisible } from './render-tool-call';
import { plainStyle } from './terminal-style';
import { VisibleStream } from './visible-stream';

const shown = (visible: VisibleText) => showVisible(visible, plainStyle);

describe('VisibleStream', () => {
  it('escapes control characters, so the model cannot drive the terminal', () => {
    const stream = new VisibleStream();
    expect(shown(stream.push('red \x1b[31mtext\x07 and\ttab\n'))).toBe('red \\u{1B}[31mtext\\u{7} and\ttab\n');
  });

  it('keeps a pair split across pieces whole, and a backslash until it knows what follows', () => {
    const stream = new VisibleStream();
    const emoji = '😀';
    expect(shown(stream.push(`a${emoji[0]!}`))).toBe('a');
    expect(shown(stream.push(`${emoji[1]!}b\\`))).toBe(`${emoji}b`);
    expect(shown(stream.push('u{41}'))).toBe('\\u{5C}u{41}');
    expect(shown(stream.push('\u202E'))).toBe('\\u{202E}');
    expect(shown(stream.flush())).toBe('');
  });

  it('shows a backslash and u split from the brace after them as the whole text does, not as an escape', () => {
    const whole = 'Done. I ran \\u{202E}txt.exe';
    const stream = new VisibleStream();
    const pieces = [stream.push('Done. I ran \\u'), stream.push('{202E}txt.exe'), stream.flush()];
    expect(pieces.map(shown).join('')).toBe(shown(toVisibleProse(whole)));
    expect(pieces.map(shown).join('')).toBe('Done. I ran \\u{5C}u{202E}txt.exe');
  });

  it('leaves letters of any script as written in prose, look-alikes included, and escapes what hides text', () => {
    const stream = new VisibleStream();
    expect(shown(stream.push('Dosya açık: kapı.txt, ɡood, привет\u200B!'))).toBe('Dosya açık: kapı.txt, ɡood, привет\\u{200B}!');
  });

  it('escapes a carriage return alone, which would draw the next words over the line, and keeps a CR LF split across pieces', () => {
    const stream = new VisibleStream();
    expect(shown(stream.push('I will upload ~/.ssh/id_rsa\rI will only read README.md\r'))).toBe('I will upload ~/.ssh/id_rsa\\u{D}I will only read README.md');
    expect(shown(stream.push('\nNext\r'))).toBe('\r\nNext');
    expect(shown(stream.flush())).toBe('\\u{D}');
  });

  it('keeps a mark split from its letter on it, as the whole text shows it, and escapes one with nothing to sit on', () => {
    const stream = new VisibleStream();
    const pieces = ['ข้อความ ท', 'ี่', 'นี่ पढ', '़', 'ें a', '\u0301', '\u0301', '\u0301 ', '\u030D'];
    const whole = pieces.join('');
    expect(pieces.map((piece) => shown(stream.push(piece))).join('') + shown(stream.flush())).toBe(shown(toVisibleProse(whole)));
    expect(shown(toVisibleProse(whole))).toBe('ข้อความ ที่นี่ पढ़ें a\u0301\u0301\\u{301} \\u{30D}');
  });
});
