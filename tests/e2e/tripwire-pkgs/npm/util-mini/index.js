'use strict';
exports.repeat = (s, n) => new Array(n + 1).join(s);
