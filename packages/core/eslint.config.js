import base, { coreImportRule } from '../../eslint.config.js';

export default [...base, coreImportRule];
