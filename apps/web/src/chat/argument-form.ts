import { canonicalJson, isPlainObject } from '@airlock/core';
import type { ToolArguments, ToolInfo } from '../lib/api-types';

export type JsonSchema = ToolInfo['inputSchema'];

/** How one argument is edited: a text box, a number box, a checkbox, a list of its allowed values, or its JSON. */
export type FieldKind = 'text' | 'multiline' | 'number' | 'integer' | 'boolean' | 'choice' | 'json';

export type ChoiceValue = string | number | boolean | null;

export interface FormField {
  name: string;
  kind: FieldKind;
  required: boolean;
  /** The schema's own words for it (a tool's, possibly an MCP server's: shown as plain text). */
  description: string | null;
  /** For a choice: the values the schema allows, in its order. */
  options: readonly ChoiceValue[];
}

/** What the inputs hold: text for every kind but a checkbox; a choice holds the index of its option ("" for none). */
export type FieldValues = ReadonlyMap<string, string | boolean>;

/** Arguments whose names suggest code or prose: edited in a text area even when short. */
const MULTILINE_NAMES = new Set(['command', 'code', 'content', 'script', 'text', 'body', 'source', 'query', 'patch']);
const LONG_TEXT = 60;

/**
 * The fields of a form for the tool's JSON Schema, one per property (plus any argument of the call the schema does
 * not name, as JSON), in the schema's order; null when the schema is not an object with properties, so the call is
 * edited as raw JSON.
 */
export function formFields(schema: JsonSchema | undefined, args: ToolArguments): FormField[] | null {
  if (schema === undefined || schema.type !== 'object' || !isPlainObject(schema.properties)) return null;
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : []);
  const fields = Object.entries(schema.properties).map(([name, property]) => fieldFor(name, property, required.has(name), args));
  const named = new Set(fields.map((field) => field.name));
  for (const name of Object.keys(args)) {
    if (!named.has(name)) fields.push({ name, kind: 'json', required: false, description: null, options: [] });
  }
  return fields;
}

function fieldFor(name: string, property: unknown, required: boolean, args: ToolArguments): FormField {
  const base = { name, required, description: isPlainObject(property) && typeof property.description === 'string' ? property.description : null, options: [] };
  if (!isPlainObject(property)) return { ...base, kind: 'json' };
  if (Array.isArray(property.enum) && property.enum.length > 0 && property.enum.every(isChoiceValue)) {
    return { ...base, kind: 'choice', options: property.enum };
  }
  const value = Object.hasOwn(args, name) ? args[name] : undefined;
  switch (property.type) {
    case 'string': {
      const long = typeof value === 'string' && (value.includes('\n') || value.length > LONG_TEXT);
      return { ...base, kind: long || MULTILINE_NAMES.has(name) ? 'multiline' : 'text' };
    }
    case 'number':
      return { ...base, kind: 'number' };
    case 'integer':
      return { ...base, kind: 'integer' };
    case 'boolean':
      return { ...base, kind: 'boolean' };
    default:
      return { ...base, kind: 'json' };
  }
}

function isChoiceValue(value: unknown): value is ChoiceValue {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** What each input shows for these arguments. */
export function fieldValues(fields: readonly FormField[], args: ToolArguments): Map<string, string | boolean> {
  const values = new Map<string, string | boolean>();
  for (const field of fields) {
    const present = Object.hasOwn(args, field.name);
    const value = present ? args[field.name] : undefined;
    switch (field.kind) {
      case 'text':
      case 'multiline':
        values.set(field.name, typeof value === 'string' ? value : present ? JSON.stringify(value) : '');
        break;
      case 'number':
      case 'integer':
        values.set(field.name, typeof value === 'number' ? String(value) : '');
        break;
      case 'boolean':
        values.set(field.name, value === true);
        break;
      case 'choice': {
        const index = present ? field.options.findIndex((option) => option === value) : -1;
        values.set(field.name, index >= 0 ? String(index) : '');
        break;
      }
      case 'json':
        values.set(field.name, present ? JSON.stringify(value, null, 2) : '');
        break;
    }
  }
  return values;
}

export interface FormRead {
  args: ToolArguments;
  /** Why a field's input cannot be read (not a number, not JSON), by field name. */
  errors: Map<string, string>;
}

/**
 * The arguments the form's inputs say. An optional argument the call did not have and whose input is left empty
 * (or unticked) stays absent, so opening the form and allowing changes nothing.
 */
export function argumentsFromFields(fields: readonly FormField[], values: FieldValues, proposed: ToolArguments): FormRead {
  const entries: [string, unknown][] = [];
  const errors = new Map<string, string>();
  for (const field of fields) {
    const input = values.get(field.name);
    const wasThere = Object.hasOwn(proposed, field.name);
    const text = typeof input === 'string' ? input : '';
    const leftOut = !field.required && !wasThere;
    switch (field.kind) {
      case 'text':
      case 'multiline':
        if (!(text === '' && leftOut)) entries.push([field.name, text]);
        break;
      case 'number':
      case 'integer': {
        if (text.trim() === '') {
          if (field.required || wasThere) errors.set(field.name, 'Enter a number.');
          break;
        }
        const number = Number(text);
        if (!Number.isFinite(number)) errors.set(field.name, 'Enter a number.');
        else if (field.kind === 'integer' && !Number.isInteger(number)) errors.set(field.name, 'Enter a whole number.');
        else entries.push([field.name, number]);
        break;
      }
      case 'boolean':
        if (!(input !== true && leftOut)) entries.push([field.name, input === true]);
        break;
      case 'choice': {
        const index = text === '' ? -1 : Number(text);
        if (index >= 0 && index < field.options.length) entries.push([field.name, field.options[index]]);
        else if (field.required) errors.set(field.name, 'Choose one.');
        break;
      }
      case 'json': {
        if (text.trim() === '') {
          if (field.required) errors.set(field.name, 'Enter a JSON value.');
          break;
        }
        const parsed = parseJson(text);
        if (parsed.ok) entries.push([field.name, parsed.value]);
        else errors.set(field.name, `Not valid JSON: ${parsed.error}`);
        break;
      }
    }
  }
  // fromEntries defines own properties: a field named "__proto__" stays an argument, never a prototype.
  return { args: Object.fromEntries(entries), errors };
}

export type JsonRead = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * The value `text` holds as JSON. A number past JSON's range is refused at any depth: `1e999` reads as Infinity, which
 * JSON sends as null, so the edited call would run with null where the preview said a number.
 */
export function parseJson(text: string): JsonRead {
  try {
    return { ok: true, value: JSON.parse(text, refuseNonFinite) as unknown };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function refuseNonFinite(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('a number is too large for JSON (it would be sent as null).');
  return value;
}

/** The arguments raw JSON says: it must be one JSON object. */
export function argumentsFromJson(text: string): { ok: true; args: ToolArguments } | { ok: false; error: string } {
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, error: `Not valid JSON: ${parsed.error}` };
  if (!isPlainObject(parsed.value)) return { ok: false, error: 'The arguments must be one JSON object: { … }.' };
  return { ok: true, args: parsed.value };
}

export interface ArgumentIssue {
  /** The argument it is about ("" for the arguments as a whole). */
  field: string;
  /** Where inside it, for a nested value ("items.2"), else "". */
  path: string;
  message: string;
}

/**
 * Checks arguments against the parts of JSON Schema tools use (type, required, properties, enum, const,
 * additionalProperties: false, items, string lengths, number bounds), to show problems as the person types. The
 * server checks again with the tool's own schema before anything runs; what this misses, it reports.
 */
export function checkArguments(schema: JsonSchema | undefined, args: ToolArguments): ArgumentIssue[] {
  if (schema === undefined) return [];
  return problemsOf(schema, args, []).map(({ path, message }) => ({ field: path[0] ?? '', path: path.slice(1).join('.'), message }));
}

function problemsOf(schema: unknown, value: unknown, path: string[]): { path: string[]; message: string }[] {
  if (!isPlainObject(schema)) return [];
  const problem = (message: string) => [{ path, message }];
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => sameJson(option, value))) {
    return problem(`Must be one of: ${schema.enum.map((option) => JSON.stringify(option)).join(', ')}.`);
  }
  if (Object.hasOwn(schema, 'const') && !sameJson(schema.const, value)) return problem(`Must be ${JSON.stringify(schema.const)}.`);
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.filter((type): type is string => typeof type === 'string') : [];
  if (types.length > 0 && !types.some((type) => hasType(value, type))) return problem(`Must be ${types.map(typeName).join(' or ')}.`);
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && [...value].length < schema.minLength) return problem(`Must be at least ${schema.minLength} characters.`);
    if (typeof schema.maxLength === 'number' && [...value].length > schema.maxLength) return problem(`Must be at most ${schema.maxLength} characters.`);
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) return problem(`Must be at least ${schema.minimum}.`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) return problem(`Must be at most ${schema.maximum}.`);
  }
  if (Array.isArray(value) && isPlainObject(schema.items)) {
    return value.flatMap((item, index) => problemsOf(schema.items, item, [...path, String(index)]));
  }
  if (isPlainObject(value)) {
    const properties = isPlainObject(schema.properties) ? schema.properties : {};
    const problems: { path: string[]; message: string }[] = [];
    const required = Array.isArray(schema.required) ? schema.required : [];
    for (const name of required) {
      if (typeof name === 'string' && !Object.hasOwn(value, name)) problems.push({ path: [...path, name], message: 'Required.' });
    }
    for (const [name, item] of Object.entries(value)) {
      if (Object.hasOwn(properties, name)) problems.push(...problemsOf(properties[name], item, [...path, name]));
      else if (schema.additionalProperties === false) problems.push({ path: [...path, name], message: `Not an argument of this tool.` });
      else if (isPlainObject(schema.additionalProperties)) problems.push(...problemsOf(schema.additionalProperties, item, [...path, name]));
    }
    return problems;
  }
  return [];
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

function typeName(type: string): string {
  const names: Record<string, string> = { string: 'text', number: 'a number', integer: 'a whole number', boolean: 'true or false', array: 'a list', object: 'an object', null: 'null' };
  return Object.hasOwn(names, type) ? names[type]! : type;
}

function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** Whether the edit changes anything: the same arguments in another key order are no edit. */
export function isSameCall(a: ToolArguments, b: ToolArguments): boolean {
  return sameJson(a, b);
}
