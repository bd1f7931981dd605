"""Credentials and look-alikes for the I8 tests, built from pieces at run time.

No line of this file holds a credential a scanner would flag: every secret is
joined from parts here, when the tests run. SECRETS maps a name to a line an
agent might paste and the kind detect-secrets names; LOOK_ALIKES are lines that
look like one (hashes, ids, UUIDs, base64 of text, URLs, code) and must pass.
"""

import base64
import hashlib
import uuid

A = "A"
AWS_ID = A + "KIA" + "IOSFODNN7" + "EXAMPLQ"  # 20 characters, the shape of an access key id
AWS_SK = "wJalrXUtnFEMI" + "/K7MDENG/bPxRfiCY" + "EXAMPLEKEQ"  # 40 characters
GH = "gh" + "p_" + "R2d2C3po" * 4 + "Xy12"  # ghp_ + 36
PEM = "-----BEGIN " + "RSA PRIVATE" + " KEY-----"


def _jwt() -> str:
    def part(text: str) -> str:
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    return ".".join((part('{"alg":"HS256","typ":"JWT"}'), part('{"sub":"1234567890","name":"Jo"}'),
                     "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


_B = "ghu_", "gho_", "ghs_", "ghr_"
SECRETS: dict[str, tuple[str, str]] = {
    "aws key id": (f"export AWS_ACCESS_KEY_ID={AWS_ID}", "AWS Access Key"),
    "aws temporary key id": ("session creds " + "AS" + "IA" + "Y34FZKBOKMUTVV7A", "AWS Access Key"),
    "aws key id ABIA": ("id " + "AB" + "IA" + "Y34FZKBOKMUTVV7A", "AWS Access Key"),
    "aws key id ACCA": ("id " + "AC" + "CA" + "Y34FZKBOKMUTVV7A", "AWS Access Key"),
    "aws key id A3T": ("id " + "A3" + "TX" + "Y34FZKBOKMUTVV7A", "AWS Access Key"),
    "aws secret key": (f'aws_secret_access_key = "{AWS_SK}"', "AWS Access Key"),
    "github classic token": (f"GITHUB_TOKEN is {GH}", "GitHub Token"),
    "github oauth token": (_B[1] + "R2d2C3po" * 4 + "Xy12", "GitHub Token"),
    "github user token": (_B[0] + "R2d2C3po" * 4 + "Xy12", "GitHub Token"),
    "github server token": (_B[2] + "R2d2C3po" * 4 + "Xy12", "GitHub Token"),
    "github refresh token": (_B[3] + "R2d2C3po" * 4 + "Xy12", "GitHub Token"),
    "github fine-grained token": ("github" + "_pat_" + "11ABCDEFG0" * 2 + "ab" + "_" + "x1Y2z3W4v5" * 5 + "abcdefghi",
                                  "GitHub Token"),
    "gitlab personal token": ("gl" + "pat-" + "xY1zW2vU3tS4rQ5pO6nM", "GitLab Token"),
    "gitlab deploy token": ("gl" + "dt-" + "xY1zW2vU3tS4rQ5pO6nM", "GitLab Token"),
    "gitlab runner token": ("gl" + "rt-" + "xY1zW2vU3tS4rQ5pO6nM", "GitLab Token"),
    "gitlab runner registration": ("GR13" + "48941" + "xY1zW2vU3tS4rQ5pO6nM", "GitLab Token"),
    "rsa private key": (PEM, "Private Key"),
    "openssh private key": ("-----BEGIN " + "OPENSSH PRIVATE" + " KEY-----", "Private Key"),
    "ec private key": ("-----BEGIN " + "EC PRIVATE" + " KEY-----", "Private Key"),
    "pkcs8 private key": ("-----BEGIN " + "PRIVATE" + " KEY-----", "Private Key"),
    "dsa private key": ("-----BEGIN " + "DSA PRIVATE" + " KEY-----", "Private Key"),
    "pgp private key": ("-----BEGIN " + "PGP PRIVATE" + " KEY BLOCK-----", "Private Key"),
    "putty key": ("PuTTY-User" + "-Key-File-2: ssh-rsa", "Private Key"),
    "basic auth url": ("clone https://" + "deploy:" + "s3cr3tPassw0rd" + "@git.example.com/x.git",
                       "Basic Auth Credentials"),
    "postgres url": ("DATABASE_URL=postgres://" + "app:" + "Tr0ub4dor" + "@db.internal:5432/app",
                     "Basic Auth Credentials"),
    "slack bot token": ("xo" + "xb-" + "1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "Slack Token"),
    "slack user token": ("xo" + "xp-" + "1234567890-1234567890123-1234567890123-abcdef0123456789", "Slack Token"),
    "slack webhook": ("https://hooks" + ".slack.com/services/" + "T0123ABCD/B0123ABCD/AbCdEfGhIjKlMnOpQrStUvWx",
                      "Slack Token"),
    "stripe secret key": ("sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "Stripe Access Key"),
    "stripe restricted key": ("rk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "Stripe Access Key"),
    "json web token": ("Authorization: Bearer " + _jwt(), "JSON Web Token"),
    "openai key": ("sk-" + "proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn" + "T3Blbk" + "FJ" + "Op7Qr8St9Uv0Wx1Yz2Ab", "OpenAI Token"),
    "python password": ('password = "' + "hunter2" + '-prod"', "Secret Keyword"),
    "json api key": ('{"api_key": "' + "9f8e7d6c5b4a" + '"}', "Secret Keyword"),
    "dotenv password": ("DB_PASSWORD=" + "Tr0ub4dor&3", "Secret Keyword"),
    "yaml password": ("password: " + "hunter2", "Secret Keyword"),
    "exported secret": ("export CLIENT_SECRET=" + "x9y8z7w6v5", "Secret Keyword"),
    "private key variable": ("private_key = '" + "k3y-m4t3r14l" + "'", "Secret Keyword"),
    # an assignment that does not start its line
    "markdown bullet aws secret": ("- aws_secret_access_key = " + AWS_SK, "AWS Access Key"),
    "html comment aws secret": ("<!-- aws_secret_access_key = " + AWS_SK + " -->", "AWS Access Key"),
    "html comment tight": ("<!--aws_secret_access_key=" + AWS_SK + "-->", "AWS Access Key"),
    "two assignments on a line": ("password: " + "hunter2" + " api_key=" + "abc123", "Secret Keyword"),
    "assignment after prose": ("the prod creds: DB_PASSWORD=" + "Tr0ub4dor&3" + " (rotate)", "Secret Keyword"),
    "query parameter": ("GET https://api.example.com/v1/items?api_key=" + "9f8e7d6c5b4a", "Secret Keyword"),
    "table cell": ("| db | password=" + "Tr0ub4dor&3" + " |", "Secret Keyword"),
    # wrapped in base64
    "base64 aws key id": ("creds " + _b64(f"AWS_ACCESS_KEY_ID={AWS_ID}"), "AWS Access Key (base64)"),
    "base64 github token": ("Authorization: token " + _b64(GH), "GitHub Token (base64)"),
    "base64 dotenv": ("env.b64 " + _b64("DB_USER=app\nDB_PASSWORD=" + "Tr0ub4dor&3" + "\n"),
                      "Secret Keyword (base64)"),
    "base64 private key": (_b64(PEM + "\nMIIEowIBAAKCAQEA\n"), "Private Key (base64)"),
    # separated by NUL and other line breaks (an environment dump)
    "nul separated environment": ("AWS_SECRET_ACCESS_KEY=" + AWS_SK + "\x00HOME=/root\x00LANG=C", "AWS Access Key"),
    "nul separated password": ("DB_PASSWORD=" + "Tr0ub4dor&3" + "\x00PATH=/usr/bin", "Secret Keyword"),
    "record separator": ("DB_PASSWORD=" + "Tr0ub4dor&3" + "\x1eUSER=app", "Secret Keyword"),
    "unicode line separator": ("CLIENT_SECRET=" + "x9y8z7w6v5" + "\u2028next", "Secret Keyword"),
    "yaml flow mapping": ("db: {user: app, password: " + "hunter2" + "2}", "Secret Keyword"),
}

LOOK_ALIKES: dict[str, str] = {
    "git commit sha": "fixed in d14e7c7a1b2c3d4e5f60718293a4b5c6d7e8f901",
    "abbreviated sha": "see commit ff77b6f and 44353ac",
    "memstack intake id": "intake id 0193ab4f5e6d7c8b9a0f1e2d3c4b",
    "memstack fact id": "fact 0193ab4f5e6d8b0000007000000001 supersedes 0193ab4f5e6d8b0000007000000000",
    "ulid": "job 01ARZ3NDEKTSV4RRFFQ69G5FAV finished",
    "uuid": f"request {uuid.UUID(int=0x123e4567e89b12d3a456426614174000)}",
    "uuid v4": "trace 9b2f6c1e-7d4a-4f3b-8e2c-5a6b7c8d9e0f",
    "sha256": "sha256 " + hashlib.sha256(b"memstack").hexdigest(),
    "sha512": hashlib.sha512(b"memstack").hexdigest(),
    "docker digest": "image@sha256:" + hashlib.sha256(b"image").hexdigest(),
    "base64 of text": base64.b64encode(b"an ordinary sentence about the weather in Lisbon today").decode(),
    "base64 of json-less text": base64.b64encode(b"passwords must be rotated every ninety days").decode(),
    "long url": "https://example.com/docs/reference/api/v2/search?query=memory+store&page=3&sort=desc#results",
    "url with port": "https://example.com:8443/path/to/resource?id=42",
    "url with at in path": "https://medium.com/@author/how-git-stores-objects-1234abcd",
    "ssh remote": "git@github.com:example/memstack.git",
    "ssh url": "ssh://git@example.com/org/repo.git",
    "email": "write to alice@example.com about the rollout",
    "env lookup": 'password = os.environ["DB_PASSWORD"]',
    "getpass": "password = getpass.getpass()",
    "empty password": 'password = ""',
    "templated password": 'api_key = "${API_KEY}"',
    "placeholder": "password: <ask the on-call engineer>",
    "vault prose": "the password is in the team vault under db/prod",
    "rotation prose": "Rotate the secret every 90 days; never paste it here.",
    "yaml word value": "password_policy: strict",
    "aws prose": "AWS region is eu-west-1 and the bucket is memstack-bench",
    "aws prefix prose": "access key ids start with AKIA, temporary ones with ASIA",
    "github prefix prose": "classic tokens start with ghp_ and fine-grained ones with github_pat_",
    "public key": "-----BEGIN PUBLIC KEY-----",
    "certificate": "-----BEGIN CERTIFICATE-----",
    "ssh public key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJ0aGVyZSBpcyBubyBrZXkgaGVyZQ alice@laptop",
    "type annotation": "def check_password(password: str) -> bool:",
    "comparison": "if password == confirmation:",
    "pwd command": "run pwd to print the working folder",
    "task words": "the sk-learn task-runner and the xox game",
    "not a jwt": "eyJfoo is not a token",
    "iso time": "2026-11-30T12:00:00.000Z and 1764504000000 ms",
    # look-alikes of the shapes above
    "password prose mid-line": "- remember: the password policy is strict; rotate the secret: monthly",
    "password question": "what is the password: ask the on-call engineer",
    "api key reference": "- api_key: see vault entry prod/api",
    "password set from env": "- DB_PASSWORD=${DB_PASSWORD} (from the environment)",
    "bullet env lookup": '- password = os.environ["DB_PASSWORD"]',
    "bullet getpass": "- password = getpass.getpass() asks for it",
    "secret id word": "the secret: yes, it is kept in the vault",
    "base64 of prose about passwords": _b64("the password policy: rotate monthly, never paste secrets"),
    "base64 of json": _b64('{"subject": "parser", "predicate": "uses", "object": "a hand-written lexer"}'),
    "long hex run": "blob " + hashlib.sha512(b"blob").hexdigest() + hashlib.sha256(b"x").hexdigest(),
    "camel case run": "see MemoryStoreConfigurationManagerFactoryBuilderImpl for the wiring",
    "long path": "src/memstack/base/secrets/detect/prefilter/shapes/tests",
    "binary base64": base64.b64encode(bytes(range(256))).decode(),
    "nul separated harmless": "HOME=/root\x00LANG=C.UTF-8\x00PATH=/usr/bin",
    "keyword argument from settings": "conn = connect(password=settings.DB_PASSWORD)",
}

