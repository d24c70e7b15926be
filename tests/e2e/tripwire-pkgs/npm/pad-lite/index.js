'use strict';
const { repeat } = require('util-mini');
module.exports = (s, n, c) => repeat(c || ' ', Math.max(0, n - String(s).length)) + s;
