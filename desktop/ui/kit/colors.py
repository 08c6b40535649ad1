"""The colours of the workbench, derived from the system palette (light or dark).

Alternatives use the Okabe–Ito palette so that the bases of A–E stay
distinguishable for colour-blind annotators and in greyscale prints; they are
never the only cue (each basis also has its own underline lane and its letter in
the margin).  Those hues are fills and lines.  Wherever a colour carries *text*
(a letter on a badge, "basis: …" in an alternative's colour, a status word), the
pair is chosen here so that its WCAG contrast ratio is at least 4.5:1 against what
it is drawn on, in the light and in the dark palette: `Theme.pairs()` lists every
such pair and the tests compute each ratio.

Widgets ask `theme()` for their colours instead of writing hex codes, so a dark
desktop gets dark-friendly colours rather than dark text on a dark window.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from PySide6.QtGui import QColor, QPalette

MIN_CONTRAST = 4.5  # WCAG 2.x AA for normal text

# Okabe–Ito: blue, vermillion, bluish green, reddish purple, orange, sky blue; vermillion
# rather than orange for B so that it never reads as the yellow of evidence.
_ALTERNATIVE_HEX = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C6D00", "#555555")

REQUIRED_HEX = "#7B8794"
# The Why? view's give-away words: an orange no alternative uses, shaded by the word's effect
# (the drop in the predicted alternative's probability without it) at these least effects.
GIVEAWAY_HEX = "#E66100"
GIVEAWAY_LEVELS = (0.01, 0.05, 0.15, 0.30)
MODEL_HEX = "#C0392B"
TINT_ALPHA = 48  # the basis tint over the passage's background

# Acceptability classes of EMBRACE: acceptable, mainly, partially, unacceptable (fills and bars).
ACCEPTABILITY_HEX = {
    "acceptable": "#2E9E44",
    "mainly acceptable": "#D4B106",
    "partially acceptable": "#E07B00",
    "unacceptable": "#C62828",
}
_TIER_HEX = {"none": "#2E9E44", "mild": "#D4B106", "moderate": "#E07B00", "severe": "#C62828"}


# ---- WCAG arithmetic (no widgets) ---------------------------------------------------------
def _rgb(c) -> tuple[int, int, int]:
    q = c if isinstance(c, QColor) else QColor(c)
    return q.red(), q.green(), q.blue()


@lru_cache(maxsize=4096)
def _luminance_hex(hex_: str) -> float:
    def lin(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4
    r, g, b = _rgb(hex_)
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def luminance(c) -> float:
    """Relative luminance (WCAG 2.x) of a colour (hex string or QColor)."""
    if isinstance(c, str):
        return _luminance_hex(c)

    def lin(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4
    r, g, b = _rgb(c)
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast(fg, bg) -> float:
    """WCAG contrast ratio of two opaque colours, 1 … 21."""
    a, b = luminance(fg), luminance(bg)
    hi, lo = max(a, b), min(a, b)
    return (hi + 0.05) / (lo + 0.05)


def over(fg, alpha: int, bg) -> str:
    """`fg` at `alpha` (0–255) painted over the opaque `bg`: the colour the eye gets."""
    f, b = _rgb(fg), _rgb(bg)
    a = alpha / 255
    return "#%02X%02X%02X" % tuple(round(a * x + (1 - a) * y) for x, y in zip(f, b))


@lru_cache(maxsize=4096)  # a window asks for the same few pairs on every item
def readable(hex_: str, bg: str, ratio: float = MIN_CONTRAST) -> str:
    """`hex_` darkened (on a light `bg`) or lightened (on a dark one), keeping its hue, until
    it reaches `ratio` against `bg`; unchanged if it already does."""
    if contrast(hex_, bg) >= ratio:
        return QColor(hex_).name().upper()
    c = QColor(hex_)
    h, s, light, _a = c.getHslF()
    h = max(h, 0.0)
    darker = luminance(bg) > 0.18
    for step in range(1, 101):
        v = light * (1 - step / 100) if darker else light + (1 - light) * step / 100
        cand = QColor.fromHslF(h, s, min(max(v, 0.0), 1.0))
        if contrast(cand, bg) >= ratio:
            return cand.name().upper()
    return "#000000" if darker else "#FFFFFF"


def on(fill: str) -> str:
    """Black or white, whichever reads better on `fill` (letters on badges)."""
    return "#000000" if contrast("#000000", fill) >= contrast("#FFFFFF", fill) else "#FFFFFF"


# ---- the theme -------------------------------------------------------------------------------
@dataclass
class Theme:
    dark: bool
    text: str  # palette WindowText
    window: str  # palette Window: labels, forms
    base: str  # palette Base: the passage, lists, text fields
    base_text: str
    muted: str = ""  # secondary text on the window
    ok: str = ""  # "saved", "acceptable", the key mark
    warn: str = ""  # "typing…", "context barely helps"
    error: str = ""  # "not saved", validation errors
    info: str = ""  # neutral highlights ("your evidence overlaps it")
    evidence_bg: str = ""  # the evidence marker in the passage and on its button
    evidence_text: str = ""
    key_bg: str = ""  # the key's background in the question view
    banner_bg: str = ""  # warning strips (conflict banner, eligibility note)
    banner_text: str = ""
    error_bg: str = ""
    error_text: str = ""
    found_bg: str = ""  # what the surface linter found, in its excerpt
    found_text: str = ""
    track: str = ""  # the empty part of a probability bar
    bar_shortcut: str = ""  # the shortcut model's (Q+{O}) probability bars, on the track
    bar_standard: str = ""  # the standard model's (C+Q+{O})
    bar_scratch: str = ""  # the what-if scratch copy's
    extra: dict = field(default_factory=dict)

    # alternatives ---------------------------------------------------------------------------
    @staticmethod
    def alternative_fill(index: int) -> str:
        """The alternative's hue for fills and lines (badges, lanes, bars)."""
        return _ALTERNATIVE_HEX[index % len(_ALTERNATIVE_HEX)]

    def on_alternative(self, index: int) -> str:
        """Text on the alternative's badge."""
        return on(self.alternative_fill(index))

    def alternative_text(self, index: int, bg: str | None = None) -> str:
        """The alternative's hue as text on the window (or on `bg`)."""
        return readable(self.alternative_fill(index), bg or self.window)

    def tint(self, index: int) -> str:
        """The basis tint under passage text, as painted over the base."""
        return over(self.alternative_fill(index), TINT_ALPHA, self.base)

    def tier_text(self, tier: str | None, bg: str | None = None) -> str:
        """Text in the colour of an acceptability class or tier (tree headings)."""
        return readable(acceptability_hex(tier), bg or self.base)

    def status_text(self, status: str) -> str:
        """The navigator's status marks on the list's base."""
        hue = {"untouched": "#9E9E9E", "in progress": "#E08E00", "done": "#2E9E44"}.get(status, self.base_text)
        return readable(hue, self.base)

    def giveaway_shades(self) -> list[tuple[float, str]]:
        """(least effect, fill) of each shade of the Why? view's give-away words, weakest first:
        one hue, stronger as the word moves the shortcut model more; each fill keeps the
        passage text readable on it (`pairs`)."""
        alphas = (70, 120, 175, 230) if not self.dark else (60, 95, 130, 165)
        out = []
        for least, alpha in zip(GIVEAWAY_LEVELS, alphas):
            fill = over(GIVEAWAY_HEX, alpha, self.base)
            while contrast(self.base_text, fill) < MIN_CONTRAST and alpha > 10:
                alpha -= 5
                fill = over(GIVEAWAY_HEX, alpha, self.base)
            out.append((least, fill))
        return out

    def pairs(self, alternatives: int = 8) -> list[tuple[str, str, str]]:
        """(what, text colour, background) for every coloured text the window draws."""
        out = [
            ("text on window", self.text, self.window),
            ("text on base", self.base_text, self.base),
            ("muted", self.muted, self.window),
            ("ok", self.ok, self.window),
            ("warn", self.warn, self.window),
            ("error", self.error, self.window),
            ("info", self.info, self.window),
            ("evidence button / marker", self.evidence_text, self.evidence_bg),
            ("passage text on evidence", self.base_text, self.evidence_bg),
            ("key", self.base_text, self.key_bg),
            ("key on window", self.text, self.key_bg),
            ("key mark", self.ok, self.window),
            ("banner", self.banner_text, self.banner_bg),
            ("error banner", self.error_text, self.error_bg),
            ("linter find", self.found_text, self.found_bg),
            ("probability label", self.text, self.window),
        ]
        for i in range(alternatives):
            out.append((f"letter on badge {i}", self.on_alternative(i), self.alternative_fill(i)))
            out.append((f"basis text {i}", self.alternative_text(i), self.window))
            out.append((f"passage text on tint {i}", self.base_text, self.tint(i)))
            out.append((f"passage text on evidence+tint {i}", self.base_text,
                        over(self.alternative_fill(i), TINT_ALPHA, self.evidence_bg)))
        for tier in ("mild", "moderate", "severe", "acceptable", None):
            out.append((f"tier {tier}", self.tier_text(tier), self.base))
        for s in ("untouched", "in progress", "done"):
            out.append((f"status {s}", self.status_text(s), self.base))
        for c in ACCEPTABILITY_HEX.values():
            # the acceptability summary: window text on the class's light wash
            out.append((f"acceptability wash {c}", self.text, over(c, 40, self.window)))
        for least, fill in self.giveaway_shades():
            out.append((f"give-away word, effect ≥ {least:g}", self.base_text, fill))
        return out

    def graphics(self) -> list[tuple[str, str, str]]:
        """(what, colour, background) of every graphic a reader must make out: 3:1 (WCAG 1.4.11)."""
        return [("shortcut bar on its track", self.bar_shortcut, self.track),
                ("standard bar on its track", self.bar_standard, self.track),
                ("what-if bar on its track", self.bar_scratch, self.track)]


def theme_for(palette: QPalette) -> Theme:
    """The colours for one palette (light when its window is light)."""
    window = palette.color(QPalette.Window).name().upper()
    base = palette.color(QPalette.Base).name().upper()
    text = readable(palette.color(QPalette.WindowText).name(), window, 7.0)
    base_text = readable(palette.color(QPalette.Text).name(), base, 7.0)
    dark = luminance(window) < 0.18
    t = Theme(dark=dark, text=text, window=window, base=base, base_text=base_text)
    t.muted = readable("#9A9A9A" if dark else "#5F5F5F", window)
    t.ok = readable("#66BB6A" if dark else "#2E7D32", window)
    t.warn = readable("#FFB74D" if dark else "#8A5300", window)
    t.error = readable("#EF9A9A" if dark else "#B00020", window)
    t.info = readable("#90CAF9" if dark else "#1565C0", window)
    if dark:
        # A marker pen on a dark page: deep amber with light text, not a yellow glare.
        t.evidence_bg, t.key_bg = "#5C4A00", "#1E4620"
        t.banner_bg, t.banner_text = "#4A3B00", "#FFE9A8"
        t.error_bg, t.error_text = "#4A1414", "#FFCDD2"
        t.found_bg, t.found_text = "#5A1A1A", "#FFD6D6"
        t.track = "#3A3A3A"
        # light bars on the dark track, the shortcut's paler than the standard model's
        bars = ("#C9D6E3", "#5C9BD6", "#CE93D8")
    else:
        t.evidence_bg, t.key_bg = "#FFE866", "#DDF2E0"
        t.banner_bg, t.banner_text = "#FFF4D6", "#5C4300"
        t.error_bg, t.error_text = "#FDECEA", "#8E0000"
        t.found_bg, t.found_text = "#FFD6D6", "#8B0000"
        t.track = "#E4E4E4"
        # dark bars on the light track, the shortcut's lighter than the standard model's
        bars = ("#5B7FA6", "#1F4E79", "#6A1B9A")
    # each bar at least 3:1 against the track it fills (WCAG 1.4.11: graphics a reader needs)
    t.bar_shortcut, t.bar_standard, t.bar_scratch = (readable(b, t.track, 3.0) for b in bars)
    t.evidence_text = readable(base_text, t.evidence_bg)
    return t


_cache: dict[int, Theme] = {}


def theme(palette: QPalette | None = None) -> Theme:
    """The theme of `palette`, or of the application's palette now."""
    if palette is None:
        from PySide6.QtWidgets import QApplication
        app = QApplication.instance()
        palette = app.palette() if app is not None else QPalette()
    key = palette.cacheKey()  # cheap: the window asks on every item and every paint
    t = _cache.get(key)
    if t is None:
        t = _cache[key] = theme_for(palette)
    return t


def dark_palette() -> QPalette:
    """A dark palette (as a dark desktop gives): for `MCQLENS_PALETTE=dark`, screenshots and tests."""
    p = QPalette()
    roles = {
        QPalette.Window: "#2B2B2B", QPalette.WindowText: "#E8E8E8", QPalette.Base: "#1F1F1F",
        QPalette.AlternateBase: "#2A2A2A", QPalette.Text: "#E8E8E8", QPalette.Button: "#3A3A3A",
        QPalette.ButtonText: "#E8E8E8", QPalette.ToolTipBase: "#3A3A3A", QPalette.ToolTipText: "#E8E8E8",
        QPalette.Highlight: "#2F65CA", QPalette.HighlightedText: "#FFFFFF", QPalette.Link: "#8AB4F8",
        QPalette.PlaceholderText: "#A0A0A0", QPalette.BrightText: "#FF6E6E", QPalette.Light: "#4A4A4A",
        QPalette.Midlight: "#3E3E3E", QPalette.Mid: "#303030", QPalette.Dark: "#202020", QPalette.Shadow: "#000000",
    }
    for role, hex_ in roles.items():
        p.setColor(role, QColor(hex_))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, QColor("#8A8A8A"))
    return p


def light_palette() -> QPalette:
    """A light palette like Fusion's default (for screenshots and tests that compare both)."""
    p = QPalette()
    roles = {
        QPalette.Window: "#EFEFEF", QPalette.WindowText: "#000000", QPalette.Base: "#FFFFFF",
        QPalette.AlternateBase: "#F7F7F7", QPalette.Text: "#000000", QPalette.Button: "#EFEFEF",
        QPalette.ButtonText: "#000000", QPalette.ToolTipBase: "#FFFFDC", QPalette.ToolTipText: "#000000",
        QPalette.Highlight: "#308CC6", QPalette.HighlightedText: "#FFFFFF", QPalette.Link: "#0000FF",
        QPalette.PlaceholderText: "#6A6A6A", QPalette.BrightText: "#FFFFFF", QPalette.Light: "#FFFFFF",
        QPalette.Midlight: "#CACACA", QPalette.Mid: "#B8B8B8", QPalette.Dark: "#9F9F9F", QPalette.Shadow: "#767676",
    }
    for role, hex_ in roles.items():
        p.setColor(role, QColor(hex_))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, QColor("#7A7A7A"))
    return p


# ---- the older helpers, kept for the painting code -------------------------------------------------
def alternative_color(index: int, alpha: int = 255) -> QColor:
    color = QColor(_ALTERNATIVE_HEX[index % len(_ALTERNATIVE_HEX)])
    color.setAlpha(alpha)
    return color


def alternative_hex(index: int) -> str:
    return _ALTERNATIVE_HEX[index % len(_ALTERNATIVE_HEX)]


def color(hex_: str, alpha: int = 255) -> QColor:
    c = QColor(hex_)
    c.setAlpha(alpha)
    return c


def acceptability_hex(name: str | None) -> str:
    """Colour of an acceptability class or tier name; grey when unknown."""
    if not name:
        return "#777777"
    key = str(name).strip().lower()
    return ACCEPTABILITY_HEX.get(key) or _TIER_HEX.get(key) or "#777777"
