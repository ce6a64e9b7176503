#!/usr/bin/python3
"""The review gallery in headless Chromium, driven over the DevTools protocol.

Usage: check_gallery.py WINNOW OUT_DIR [--screenshots DIR]

Builds a clip-art fixture from Debian's openclipart-png (3 class folders, with
planted copies: a byte copy under another class, a half-size JPEG, a re-encoded
PNG), runs `winnow init`, `import-folder` and `gallery`, then in Chromium:
every picture decodes (naturalWidth > 0), every planted pair is one group, a
class filter changes what is shown, and a verdict made by clicking lands in
the downloaded file, which `winnow review` applies. The protocol runs over
--remote-debugging-pipe (file descriptors 3 and 4, NUL-framed JSON): the
standard library is enough. Exit 77 (skip) when Chromium is not installed.
"""
import base64
import fcntl
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from PIL import Image

CLASSES = ["animals", "buildings", "food"]
PER_CLASS = 20


def fail(message):
    sys.exit("FAIL: " + message)


def build_fixture(root):
    """The folders, and the planted (copy key, original key) pairs."""
    planted = []
    for c in CLASSES:
        os.makedirs(os.path.join(root, c))
        files = sorted(glob.glob(f"/usr/share/openclipart/png/{c}/*.png"))[:PER_CLASS]
        if len(files) < PER_CLASS:
            fail(f"openclipart-png has too few images in {c}")
        for f in files:
            shutil.copy(f, os.path.join(root, c))
    first = {c: sorted(os.listdir(os.path.join(root, c))) for c in CLASSES}
    # A byte copy under another class: a label conflict.
    shutil.copy(os.path.join(root, "food", first["food"][3]), os.path.join(root, "buildings", "zz_copy.png"))
    planted.append(("buildings/zz_copy.png", "food/" + first["food"][3]))
    # A half-size JPEG and a re-encoded PNG of two animals.
    for n, (name, save) in enumerate([("zz_half.jpg", "half"), ("zz_again.png", "again")]):
        src = os.path.join(root, "animals", first["animals"][5 + n])
        rgba = Image.open(src).convert("RGBA")  # on white, as winnow composites transparency
        image = Image.new("RGB", rgba.size, "white")
        image.paste(rgba, mask=rgba.getchannel("A"))
        if save == "half":
            image.resize((image.width // 2, image.height // 2)).save(os.path.join(root, "animals", name), quality=90)
        else:
            image.save(os.path.join(root, "animals", name), optimize=True)
        planted.append(("animals/" + name, "animals/" + first["animals"][5 + n]))
    return planted


class Chromium:
    """One headless Chromium over --remote-debugging-pipe."""

    def __init__(self, binary, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # Out of the way of 3 and 4 first, so that neither dup2 below closes the other.
        for name in ("to_chrome_r", "from_chrome_w"):
            fd = locals()[name]
            high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(fd)
            if name == "to_chrome_r":
                to_chrome_r = high
            else:
                from_chrome_w = high

        def child_fds():  # dup2 leaves the copies inheritable
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "--window-size=1200,1600", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=False,
            preexec_fn=child_fds)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.next_id = 0
        self.buffer = b""
        self.session = None

    def send(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while time.time() < deadline:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self.next_id:
                    if "error" in reply:
                        fail(f"{method}: {reply['error']}")
                    return reply["result"]
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                fail("Chromium closed the pipe")
            self.buffer += chunk
        fail(f"{method}: no reply in {timeout} s")

    def open(self, url):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        self.send("Page.enable")
        self.send("Page.navigate", {"url": url})
        for _ in range(200):
            if self.eval("document.readyState") == "complete":
                return
            time.sleep(0.05)
        fail("the page never finished loading")

    def eval(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            fail(f"script error in {expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector):
        """A real mouse click at the middle of the first element matching `selector`."""
        box = self.eval(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            if (!e) return null; e.scrollIntoView({{block: 'center'}});
            const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()""")
        if box is None:
            fail(f"nothing matches {selector}")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def screenshot(self, selector, path):
        self.eval(f"document.querySelector({json.dumps(selector)}).scrollIntoView()")
        time.sleep(0.2)
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=10)
        except SystemExit:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def winnow(binary, *args, expect=0):
    run = subprocess.run([binary, *args], capture_output=True, text=True, timeout=240)
    if expect is not None and run.returncode != expect:
        fail(f"winnow {' '.join(args)}: exit {run.returncode}\n{run.stdout}\n{run.stderr}")
    return run


def main():
    binary, out = sys.argv[1], sys.argv[2]
    screenshots = sys.argv[sys.argv.index("--screenshots") + 1] if "--screenshots" in sys.argv else None
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: chromium is not installed (apt-get install chromium, or scripts/install-deps)")
        sys.exit(77)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    folder, db, page = os.path.join(out, "clipart"), os.path.join(out, "g.db"), os.path.join(out, "gallery.html")
    planted = build_fixture(folder)
    winnow(binary, "init", "--db", db)
    winnow(binary, "import-folder", "--db", db, folder, "--json")
    winnow(binary, "gallery", "--db", db, "--out", page)

    downloads = os.path.join(out, "downloads")
    os.makedirs(downloads)
    profile = tempfile.mkdtemp()
    browser = Chromium(chromium, profile)
    try:
        browser.send("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads},
                     session=False)
        browser.open("file://" + os.path.abspath(page))

        # Every picture decodes.
        images = browser.eval("""Promise.all(Array.from(document.images).map(i => i.decode().then(
            () => i.naturalWidth, () => 0)))""")
        if not images or min(images) <= 0:
            fail(f"{images.count(0) if images else 'all'} of {len(images or [])} pictures did not decode")

        # Every planted pair is one group.
        groups = browser.eval("""Array.from(document.querySelectorAll('section[data-section=duplicates] .unit'))
            .map(u => Array.from(u.querySelectorAll('.card')).map(c => c.dataset.item))""")
        for copy, original in planted:
            if not any(copy in g and original in g for g in groups):
                fail(f"the planted pair {copy} / {original} is not one group: {groups}")
        conflict = browser.eval("""Array.from(document.querySelectorAll('.unit.conflict'))
            .map(u => Array.from(u.querySelectorAll('.card')).map(c => c.dataset.item))""")
        if not any("buildings/zz_copy.png" in g for g in conflict):
            fail("the copy under another class is not marked as a label conflict")

        # The outliers: samples with their nearest similarity.
        outliers = browser.eval("document.querySelectorAll('section[data-section=outliers] .unit').length")
        if not outliers:
            fail("the outlier section shows no sample")

        # A class filter changes what is shown, and shows only that class.
        every = browser.eval("Number(document.getElementById('shown').textContent)")
        browser.eval("""(() => { const s = document.getElementById('f-label'); s.value = 'buildings';
            s.dispatchEvent(new Event('change', {bubbles: true})); })()""")
        some = browser.eval("Number(document.getElementById('shown').textContent)")
        labels_shown = browser.eval("""Array.from(document.querySelectorAll('.unit:not(.hidden)'))
            .filter(u => !u.closest('section.hidden'))
            .map(u => Array.from(u.querySelectorAll('.card:not(.neighbour)')).map(c => c.dataset.label))""")
        if not 0 < some < every or not all("buildings" in l for l in labels_shown):
            fail(f"the class filter showed {some} of {every}: {labels_shown}")
        browser.eval("""(() => { const s = document.getElementById('f-label'); s.value = '';
            s.dispatchEvent(new Event('change', {bubbles: true})); })()""")

        # The reason filter: "label conflict" leaves the conflicting group only.
        browser.eval("""(() => { const s = document.getElementById('reason'); s.value = 'label conflict';
            s.dispatchEvent(new Event('input', {bubbles: true})); })()""")
        conflicts_shown = browser.eval("""Array.from(document.querySelectorAll('.unit:not(.hidden)'))
            .filter(u => !u.closest('section.hidden')).length""")
        if conflicts_shown < 1 or conflicts_shown >= every:
            fail(f"the reason filter showed {conflicts_shown} of {every}")
        browser.eval("""(() => { const s = document.getElementById('reason'); s.value = '';
            s.dispatchEvent(new Event('input', {bubbles: true})); })()""")

        # Verdicts by clicking, then the download.
        browser.click('.card[data-item="buildings/zz_copy.png"] button[data-verdict="drop"]')
        browser.click('.card.copy[data-item="animals/zz_half.jpg"] button[data-verdict="not_duplicate"]')
        if browser.eval("document.getElementById('count').textContent") != "2":
            fail("two clicks did not make two verdicts")
        browser.eval("document.getElementById('reviewer').value = 'tester'")
        browser.click("#download")
        file = os.path.join(downloads, "verdicts.csv")
        for _ in range(100):
            if os.path.exists(file):
                break
            time.sleep(0.1)
        else:
            fail("no verdict file was downloaded")
        if screenshots:
            for section in ("duplicates", "label-issues", "image-quality", "outliers"):
                browser.screenshot(f"section[data-section={section}]",
                                   os.path.join(screenshots, f"gallery-{section}.png"))
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)

    rows = open(file).read().splitlines()
    if rows[0] != "item,verdict,label,reviewer,note" or len(rows) != 3:
        fail(f"the verdict file is {rows}")
    applied = json.loads(winnow(binary, "review", "--db", db, file, "--json").stdout)
    if applied["applied"] != 2 or applied["refused"] != 0:
        fail(f"winnow review did not apply both verdicts: {applied}")
    samples = {json.loads(l)["key"]: json.loads(l) for l in winnow(binary, "export", "--db", db).stdout.splitlines()}
    if samples["buildings/zz_copy.png"]["status"] != "rejected" or \
            samples["animals/zz_half.jpg"]["status"] != "accepted" or \
            samples["animals/zz_half.jpg"]["review"]["reviewer"] != "tester":
        fail("the verdicts are not what export shows")
    print(f"OK: {len(images)} pictures, {len(groups)} groups, filter {some} of {every}, 2 verdicts applied")


if __name__ == "__main__":
    main()
