"""What the script tests share: failed checks collected rather than stopping at the first, the
script under test run with this Python, the bad-input rule (one error line, exit 2, nothing on
stdout) and the closing report."""
import subprocess
import sys


class ScriptChecks:
    def __init__(self, script):
        self.script = script
        self.failures = []

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)

    def run(self, args, stdin=None):
        return subprocess.run([sys.executable, self.script, *args], input=stdin, capture_output=True, text=True)

    def check_usage_error(self, args, what):
        """Bad input: exit code 2, one line on stderr, nothing on stdout."""
        res = self.run(args)
        self.check(res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and res.stdout == "",
                   f"{what}: exit {res.returncode}, stderr {res.stderr!r}")

    def finish(self, name):
        """Prints the failures and exits 1 if there were any, else 0."""
        for f in self.failures:
            print("FAIL:", f)
        print(f"{name}: {len(self.failures)} failure(s)")
        sys.exit(1 if self.failures else 0)
