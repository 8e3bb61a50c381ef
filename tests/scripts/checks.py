"""What the script tests share: failed checks collected rather than stopping at the first, and the
script under test run with this Python."""
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
