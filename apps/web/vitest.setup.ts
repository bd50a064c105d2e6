import { expect, vi } from 'vitest';
import { makeWaitsPatient } from '@airlock/core/testing';

// A wait with no timeout of its own bounds a hang, not a time: see makeWaitsPatient.
makeWaitsPatient(vi, expect);
