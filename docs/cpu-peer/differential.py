#!/usr/bin/env python3
"""Differential runs of libvmaf's `vmaf` tool and `vmafx` on inputs the
goldens do not have: random crops of the golden clips (sizes down to 8
pixels, odd and even), converted to 8, 10 or 12 bits, and random extractor
options. Every per-frame value must be the same double, or both tools must
refuse the run. A developer's tool (docs/parity.md), not a test: it needs
libvmaf built beside vmafx.

  PEER=path/to/vmaf VMAFX=path/to/vmafx \\
      docs/cpu-peer/differential.py crops|options|multi FIRST_SEED LAST_SEED

PEER: libvmaf's tool built from ../shared/thirdparty with its JSON values
printed in full (in libvmaf/src/output.c, the per-frame `%.6f` and
`%.16f` of the JSON writer replaced by `%.17g`), meson release build with
asm. `crops` runs six extractor sets on each crop; `options` one
extractor with 1-4 random options (EXTRACTOR=name picks it; FEATURE=...
gives the whole `--feature` value); `multi` two to four extractors with
random options at once, beside a model or none. WORK: a scratch folder (default
/tmp/vmafx-differential). Odd sizes: the peer reads the floored-chroma
copy of each file, vmafx the standard one (ADR 0002); ciede2000 at odd
4:2:0/4:2:2 sizes is skipped (ADR 0004). When the peer crashes the crop
is compared with the peer's SIMD off (`--cpumask 255`) and says so.
Known differences are in ADR 0005's amendments.
"""
import json
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, 'tests', 'golden')
PEER = os.environ['PEER']
VMAFX = os.environ['VMAFX']
WORK = os.environ.get('WORK', '/tmp/vmafx-differential')
MANIFEST = json.load(open(os.path.join(GOLDEN, 'manifest.json')))

CROP_SETS = [
    ['-m', 'version=vmaf_v0.6.1', '--feature', 'psnr', '--feature', 'cambi',
     '--feature', 'ciede', '--feature', 'psnr_hvs'],
    ['-n', '--feature', 'float_ssim', '--feature', 'float_ms_ssim'],
    ['-m', 'version=vmaf_float_v0.6.1', '-m', 'version=vmaf_v0.6.1neg:name=neg',
     '--feature', 'float_moment', '--feature', 'float_ansnr'],
    ['-m', 'version=vmaf_v1.0.16_3d0h', '--feature', 'float_vif=debug=true',
     '--feature', 'adm=debug=true', '--feature', 'vif=debug=true',
     '--feature', 'motion=debug=true'],
    ['--feature', 'adm=debug=true:adm_enhn_gain_limit=1.2',
     '--feature', 'vif=debug=true:vif_enhn_gain_limit=1.5'],
    ['--feature', 'float_adm=debug=true:adm_enhn_gain_limit=1.3',
     '--feature', 'float_vif=debug=true:vif_enhn_gain_limit=1.7',
     '--feature', 'adm=adm_csf_mode=2:adm_enhn_gain_limit=2.5'],
]

# (name, type, range or choices); libvmaf 3.2.0's option tables.
B, I, D, S = 'bool', 'int', 'double', 'str'
METHODS = ['nearest', 'bilinear', 'bicubic', 'lanczos']
OPTIONS = {
    'adm': [('debug', B), ('adm_csf_scale', D, 0, 50), ('adm_csf_diag_scale', D, 0, 50),
            ('adm_dlm_weight', D, 0, 1), ('adm_enhn_gain_limit', D, 1, 100),
            ('adm_norm_view_dist', D, 0.75, 24), ('adm_ref_display_height', I, 1, 4320),
            ('adm_csf_mode', I, 0, 3), ('adm_noise_weight', D, 0, 1500), ('adm_skip_aim', B),
            ('adm_skip_scale0', B), ('adm_min_val', D, 0, 1)],
    'vif': [('debug', B), ('vif_enhn_gain_limit', D, 1, 100), ('vif_skip_scale0', B)],
    'motion': [('debug', B), ('motion_force_zero', B), ('motion_blend_factor', D, 0, 1),
               ('motion_blend_offset', D, 0, 1000), ('motion_fps_weight', D, 0, 5),
               ('motion_max_val', D, 0, 10000), ('motion_five_frame_window', B),
               ('motion_moving_average', B)],
    'cambi': [('cambi_max_val', D, 0, 1000), ('enc_width', I, 180, 7680),
              ('enc_height', I, 150, 7680), ('enc_bitdepth', I, 6, 16),
              ('src_width', I, 320, 7680), ('src_height', I, 200, 4320),
              ('window_size', I, 15, 127), ('topk', D, 0.0001, 1),
              ('tvi_threshold', D, 0.0001, 1), ('cambi_vis_lum_threshold', D, 0, 300),
              ('max_log_contrast', I, 0, 5), ('full_ref', B), ('eotf', S, ['bt1886', 'pq']),
              ('cambi_high_res_speedup', I, 0, 4)],
    'psnr': [('enable_chroma', B), ('enable_mse', B), ('enable_apsnr', B),
             ('reduced_hbd_peak', B), ('min_sse', D, 0, 1000)],
    'float_ssim': [('enable_lcs', B), ('enable_db', B), ('clip_db', B), ('scale', I, 0, 10)],
    'float_ms_ssim': [('enable_lcs', B), ('enable_db', B), ('clip_db', B)],
    'float_adm': [('debug', B), ('adm_enhn_gain_limit', D, 1, 100),
                  ('adm_norm_view_dist', D, 0.75, 24), ('adm_noise_weight', D, 0, 1500),
                  ('adm_csf_scale', D, 0, 50), ('adm_csf_diag_scale', D, 0, 50),
                  ('adm_ref_display_height', I, 1, 4320), ('adm_csf_mode', I, 0, 9),
                  ('adm_bypass_cm', I, 0, 1), ('adm_adm3_apply_hm', B), ('adm_p_norm', D, 1, 20),
                  ('adm_dlm_weight', D, 0, 1), ('adm_min_val', D, 0, 1)]
                 + [(f'adm_f{f}s{s}', D, -1, 10) for f in (1, 2) for s in range(4)]
                 + [('adm_skip_aim_scale', I, 0, 3), ('adm_skip_scale0', B)],
    'float_vif': [('debug', B), ('vif_enhn_gain_limit', D, 1, 100), ('vif_kernelscale', D, 0.1, 4),
                  ('vif_prescale', D, 0.1, 4), ('vif_scale1_min_val', D, 0, 1),
                  ('vif_scale2_min_val', D, 0, 1), ('vif_scale3_min_val', D, 0, 1),
                  ('vif_prescale_method', S, METHODS), ('vif_sigma_nsq', D, 0, 5),
                  ('vif_skip_scale0', B)],
    'float_motion': [('debug', B), ('motion_force_zero', B), ('motion_fps_weight', D, 0, 5),
                     ('motion_blend_factor', D, 0, 1), ('motion_blend_offset', D, 0, 1000),
                     ('motion_add_scale1', B), ('motion_filter_size', I, 0, 9),
                     ('motion_add_uv', B), ('motion_max_val', D, 0, 10000)],
    'speed_chroma': [('speed_kernelscale', D, 0.1, 4), ('speed_prescale', D, 0.1, 4),
                     ('speed_prescale_method', S, METHODS), ('speed_sigma_nn', D, 0.1, 2),
                     ('speed_nn_floor', D, 0, 1), ('speed_max_val', D, 0, 1000),
                     ('speed_weight_var_mode', I, 0, 6)],
    'speed_temporal': [('speed_kernelscale', D, 0.1, 4), ('speed_prescale', D, 0.1, 4),
                       ('speed_prescale_method', S, METHODS), ('speed_sigma_nn', D, 0.1, 2),
                       ('speed_nn_floor', D, 0, 1), ('speed_max_val', D, 0, 1000),
                       ('speed_use_ref_diff', B)],
}

_clips = {}


def clip_frames(vector, file_name):
    """The frames of a golden clip: per frame, per plane, rows of samples."""
    key = (vector['folder'], file_name)
    if key not in _clips:
        path = os.path.join(GOLDEN, vector['folder'], file_name + '.zst')
        data = subprocess.run(['zstd', '-dc', path], capture_output=True, check=True).stdout
        w, h, fmt = vector['width'], vector['height'], str(vector['vmaf_pixel_format'])
        bpp = 1 if vector['bitdepth'] == 8 else 2
        dims = plane_sizes(w, h, fmt, floor=False)
        frame_bytes = sum(pw * ph for pw, ph in dims) * bpp
        frames = []
        for f in range(len(data) // frame_bytes):
            off, planes = f * frame_bytes, []
            for pw, ph in dims:
                rows = []
                for r in range(ph):
                    row = data[off + r * pw * bpp: off + (r + 1) * pw * bpp]
                    rows.append(list(row) if bpp == 1 else
                                [row[2 * i] | row[2 * i + 1] << 8 for i in range(pw)])
                planes.append(rows)
                off += pw * ph * bpp
            frames.append(planes)
        _clips[key] = frames
    return _clips[key]


def plane_sizes(w, h, fmt, floor):
    """Plane sizes: standard (ceil) chroma, or libvmaf's floored one."""
    half = (lambda n: n // 2) if floor else (lambda n: (n + 1) // 2)
    if fmt == '420':
        return [(w, h), (half(w), half(h)), (half(w), half(h))]
    if fmt == '422':
        return [(w, h), (half(w), h), (half(w), h)]
    return [(w, h)] * 3


def crop(frame, fmt, x0, y0, w, h, bits_in, bits_out, rng):
    """A crop of `frame` at another bit depth (new low bits random)."""
    sx, sy = {'420': (2, 2), '422': (2, 1), '444': (1, 1)}[fmt]
    planes = []
    for p, (pw, ph) in enumerate(plane_sizes(w, h, fmt, floor=False)):
        dx, dy = (x0, y0) if p == 0 else (x0 // sx, y0 // sy)
        rows = []
        for r in range(ph):
            src = frame[p][dy + r]
            out = []
            for v in src[dx:dx + pw]:
                if bits_out > bits_in:
                    v = v << (bits_out - bits_in) | rng.randrange(1 << (bits_out - bits_in))
                else:
                    v >>= bits_in - bits_out
                out.append(v)
            rows.append(out)
        planes.append(rows)
    return planes


def write_yuv(path, frames, fmt, w, h, bits, floor):
    with open(path, 'wb') as f:
        for planes in frames:
            for p, (pw, ph) in enumerate(plane_sizes(w, h, fmt, floor)):
                for row in planes[p][:ph]:
                    if bits == 8:
                        f.write(bytes(row[:pw]))
                    else:
                        f.write(b''.join(bytes((v & 255, v >> 8)) for v in row[:pw]))


def random_input(rng, min_side, fmt_filter=None):
    """Writes a random crop pair (standard and floored-chroma files)."""
    vectors = [v for v in MANIFEST['vectors']
               if not fmt_filter or str(v['vmaf_pixel_format']) == fmt_filter]
    v = rng.choice(vectors)
    dist = rng.choice(v['distorted'])['file'].split('/')[-1]
    W, H, fmt, bits = v['width'], v['height'], str(v['vmaf_pixel_format']), v['bitdepth']
    ref, dis = clip_frames(v, 'ref.yuv'), clip_frames(v, dist)
    n = min(len(ref), rng.randint(2, 5))
    lo = rng.choice([min_side, 24, 40, 64]) if min_side < 24 else min_side
    w, h = rng.randint(lo, W), rng.randint(lo, H)
    x0, y0 = rng.randint(0, W - w) & ~1, rng.randint(0, H - h) & ~1
    bits_out = rng.choice([8, 10, 12, bits, bits])
    f0 = rng.randint(0, len(ref) - n)
    noise = random.Random(rng.random())
    pairs = [(crop(ref[f], fmt, x0, y0, w, h, bits, bits_out, noise),
              crop(dis[f], fmt, x0, y0, w, h, bits, bits_out, noise)) for f in range(f0, f0 + n)]
    for floor, tag in ((False, ''), (True, '.floor')):
        write_yuv(f'{WORK}/ref{tag}.yuv', [p[0] for p in pairs], fmt, w, h, bits_out, floor)
        write_yuv(f'{WORK}/dis{tag}.yuv', [p[1] for p in pairs], fmt, w, h, bits_out, floor)
    label = f"{v['folder']}/{dist} {w}x{h}+{x0}+{y0} {fmt} {bits}->{bits_out} bit {n} frames"
    return label, (w, h, fmt, bits_out)


def run_both(geometry, args):
    """Runs both tools; returns (problems, note)."""
    w, h, fmt, bits = geometry
    common = ['-w', str(w), '-h', str(h), '-p', fmt, '-b', str(bits), '--json', '-q'] + args
    peer_args = ['-r', f'{WORK}/ref.floor.yuv', '-d', f'{WORK}/dis.floor.yuv'] + common
    a = subprocess.run([PEER] + peer_args + ['-o', f'{WORK}/peer.json'],
                       capture_output=True, text=True)
    note = ''
    if a.returncode < 0:
        note = ' (peer crashed; compared with its SIMD off)'
        a = subprocess.run([PEER] + peer_args + ['--cpumask', '255', '-o', f'{WORK}/peer.json'],
                           capture_output=True, text=True)
    b = subprocess.run([VMAFX, '-r', f'{WORK}/ref.yuv', '-d', f'{WORK}/dis.yuv'] + common
                       + ['--precision', 'max', '-o', f'{WORK}/vmafx.json'],
                       capture_output=True, text=True)
    if a.returncode != 0 or b.returncode != 0:
        if (a.returncode == 0) == (b.returncode == 0):
            return [], ' (both refused)'
        return [f'exit peer {a.returncode}, vmafx {b.returncode}: '
                f'{a.stderr.strip()[-150:]} | {b.stderr.strip()[-250:]}'], note
    frames_a = [f['metrics'] for f in json.load(open(f'{WORK}/peer.json'))['frames']]
    frames_b = [f['metrics'] for f in json.load(open(f'{WORK}/vmafx.json'))['frames']]
    problems = [] if len(frames_a) == len(frames_b) else [
        f'frames: peer {len(frames_a)}, vmafx {len(frames_b)}']
    odd = fmt != '444' and (w % 2 or h % 2)
    for i, (x, y) in enumerate(zip(frames_a, frames_b)):
        for key in x.keys() | y.keys():
            if odd and key.startswith('ciede2000'):
                continue
            if x.get(key) != y.get(key):
                problems.append(f'frame {i} {key}: peer {x.get(key)!r}, vmafx {y.get(key)!r}')
    return problems, note


def option_value(rng, spec):
    kind = spec[1]
    if kind == B:
        return spell(rng, rng.choice(['true', 'false']))
    if kind == S:
        return rng.choice(spec[2])
    lo, hi = spec[2], spec[3]
    if kind == I:
        v = rng.choice([lo, hi, rng.randint(lo, min(hi, lo + 20)), rng.randint(lo, hi)])
        return spell(rng, str(v))
    v = rng.choice([lo, hi, rng.uniform(lo, hi), rng.uniform(lo, lo + (hi - lo) / 10)])
    return spell(rng, f'{v:.{rng.choice([0, 1, 2, 3])}f}')


def spell(rng, text):
    """Now and then, another spelling of a value that C's readers take
    differently (a sign, hexadecimal, an exponent, a fraction or text after
    the number, a zero's sign, booleans as digits or capitals)."""
    if rng.random() > 0.25:
        return text
    if text in ('true', 'false'):
        return rng.choice([str(int(text == 'true')), text.upper(), text + 'x'])
    v = float(text)
    return rng.choice([
        '+' + text, f'{v:e}', text + '.7', text + 'abc', '-' + text.lstrip('-'),
        hex(int(v)) if v >= 0 and v == int(v) else text, f' {text}', '.' + text.lstrip('-')])


def crops_case(seed):
    rng = random.Random(seed)
    label, geometry = random_input(rng, min_side=8)
    problems, notes = [], ''
    for k, args in enumerate(CROP_SETS):
        threads = ['--threads', str(rng.choice([0, 1, 2]))]
        p, note = run_both(geometry, args + threads)
        problems += [f'set {k}: {x}' for x in p]
        notes += f' set {k}{note}' if note else ''
    return label + notes, problems


def options_case(seed):
    rng = random.Random(seed)
    label, geometry = random_input(rng, min_side=64)
    name = os.environ.get('EXTRACTOR') or rng.choice(sorted(OPTIONS))
    specs = rng.sample(OPTIONS[name], min(len(OPTIONS[name]), rng.randint(1, 4)))
    feature = os.environ.get('FEATURE') or name + '=' + ':'.join(
        f'{s[0]}={option_value(rng, s)}' for s in specs)
    problems, note = run_both(geometry, ['-n', '--feature', feature])
    return f'{label} --feature {feature}{note}', problems


def multi_case(seed):
    """Two to four extractors at once, the same one more than once with
    different options now and then (output names, instances that share
    work, models beside them)."""
    rng = random.Random(seed)
    label, geometry = random_input(rng, min_side=64)
    args = rng.choice([['-n'], ['-m', 'version=vmaf_v0.6.1'], ['-m', 'version=vmaf_v1.0.16_3d0h']])
    names = sorted(OPTIONS)
    for _ in range(rng.randint(2, 4)):
        name = rng.choice(names)
        specs = rng.sample(OPTIONS[name], min(len(OPTIONS[name]), rng.randint(0, 3)))
        options = ':'.join(f'{s[0]}={option_value(rng, s)}' for s in specs)
        args += ['--feature', name + ('=' + options if options else '')]
    problems, note = run_both(geometry, args)
    return f'{label} {" ".join(args)}{note}', problems


def main():
    mode, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    case = {'crops': crops_case, 'options': options_case, 'multi': multi_case}[mode]
    os.makedirs(WORK, exist_ok=True)
    same = 0
    for seed in range(first, last):
        label, problems = case(seed)
        print(f"seed {seed}: {label}: {'same' if not problems else 'DIFFERENT'}", flush=True)
        for p in problems[:8]:
            print('   ', p)
        same += not problems
    print(f'{same} of {last - first} the same')


if __name__ == '__main__':
    main()
