"""The AWS CLI v1 reference pages of one awscli release, for bench:quality's awscli corpus (awscli.mjs).

Run by the python of a venv where one awscli release is installed, in one process for all its pages:
  awscli_pages.py list     prints {"release": "1.36.40", "services": {service: [command, ...]}}: every
                           service of the release (botocore's, not customizations such as configure) and
                           the commands of each (its operations, plus what awscli adds, e.g. wait);
  awscli_pages.py render   reads {service: [command, ...]} on stdin and prints one JSON line a page,
                           {"service", "command", "text"}: `aws <service> help` as command "help", then
                           `aws <service> <command> help` for each command the release has.
A page is what `aws ... help` shows on Linux: awscli's own help classes write the reStructuredText, docutils'
man writer and groff -T ascii render it (as awscli's PosixHelpRenderer does), the overstrikes of bold and
underline are taken out. Hyphenation is off (-rHY=0, as man-db reads pages): a word broken at a line end is
not two words. groff runs beside this process (two at a time) while docutils writes the next pages.
"""
import contextlib
import io
import json
import re
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

from docutils.core import publish_string
from docutils.writers import manpage

import awscli
from awscli.clidriver import ServiceCommand, create_clidriver

OVERSTRIKE = re.compile(r".\x08")
GROFF = ["groff", "-m", "man", "-T", "ascii", "-rHY=0"]


class Captured:
    """A help renderer that keeps the reStructuredText instead of paging it."""

    contents = None

    def render(self, contents):
        self.contents = contents


def rst(command):
    help_command = command.create_help_command()
    captured = Captured()
    help_command.renderer = captured
    help_command([], None)
    return captured.contents


def man(text):
    # Some EC2 pages inline every enum value in one line, past docutils' default limit of 10,000.
    return publish_string(text, writer=manpage.Writer(), settings_overrides={"line_length_limit": 1_000_000, "report_level": 5})


def groff(man_source):
    out = subprocess.run(GROFF, input=man_source, capture_output=True, check=True).stdout
    return OVERSTRIKE.sub("", out.decode("utf-8", "replace"))


def services(driver):
    table = driver._get_command_table()
    return {name: cmd for name, cmd in sorted(table.items()) if isinstance(cmd, ServiceCommand)}


def list_release(driver):
    listed = {name: sorted(cmd._get_command_table()) for name, cmd in services(driver).items()}
    return {"release": awscli.__version__, "services": listed}


def pages(driver, wanted):
    table = services(driver)
    for service, commands in sorted(wanted.items()):
        if service not in table:
            continue
        own = table[service]._get_command_table()
        yield service, "help", table[service]
        for name in commands:
            if name in own:
                yield service, name, own[name]


def render(driver, wanted, out):
    with ThreadPoolExecutor(2) as pool:
        pending = []
        for service, name, command in pages(driver, wanted):
            try:
                source = man(rst(command))
            except Exception as error:  # a page this release cannot write: said, and left out
                print("awscli_pages: %s %s: %s" % (service, name, error), file=sys.stderr)
                continue
            pending.append((service, name, pool.submit(groff, source)))
            if len(pending) > 8:
                write(out, *pending.pop(0))
        for item in pending:
            write(out, *item)


def write(out, service, name, future):
    out.write(json.dumps({"service": service, "command": name, "text": future.result()}) + "\n")


def main(mode):
    warnings.simplefilter("ignore")
    # awscli prints deprecation notices (e.g. of the Python version) on stderr when the driver starts.
    with contextlib.redirect_stderr(io.StringIO()):
        driver = create_clidriver()
    if mode == "list":
        print(json.dumps(list_release(driver)))
    elif mode == "render":
        render(driver, json.load(sys.stdin), sys.stdout)
    else:
        sys.exit("awscli_pages.py %s: give list or render" % mode)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
