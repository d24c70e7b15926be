// What a native module's install step does and a tripwire must not mind: it
// looks at the environment, the home directory (node-gyp keeps its headers
// in ~/.cache/node-gyp) and the platform, and writes its build output.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const home = os.homedir();
const cache = path.join(home, '.cache', 'node-gyp', process.versions.node);
fs.mkdirSync(cache, { recursive: true });
fs.readdirSync(home);
fs.writeFileSync(path.join(__dirname, 'build.json'),
	JSON.stringify({ platform: os.platform(), arch: os.arch(), node: process.version }));
