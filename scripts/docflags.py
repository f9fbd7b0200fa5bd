# Rewrites the "Every flag" blocks of docs/operations.md from bin/strato ROLE --help
# (make build first); cmd/strato TestOperationsDocListsEveryFlag holds them to it.
import subprocess, re, sys
p = 'docs/operations.md'
s = open(p).read()
for role in ['meta', 'datanode', 's3']:
    out = subprocess.run(['bin/strato', role, '--help'], capture_output=True, text=True).stdout
    lines = out.split('\n')
    # drop the Short line (first non-empty line before Usage) and -h, --help
    i = lines.index('Usage:')
    lines = [l for l in lines[i:] if not re.match(r'^\s+-h, --help', l)]
    body = '\n'.join(lines).rstrip('\n') + '\n'
    h = s.index('### strato ' + role + '\n')
    a = s.index('```\n', h) + 4
    b = s.index('```\n', a)
    s = s[:a] + body + s[b:]
open(p, 'w').write(s)
