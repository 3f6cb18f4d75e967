/**
 * What a bundle does with secrets and the network, line by line: reading credentials, sending data
 * out, receiving-only hosts. Alone most are mild; scanner.ts and intent.ts combine them per file and
 * across the bundle (a stealer is a read plus a send, often in two files).
 */

/** Hosts whose only use in a skill is to receive data or serve throwaway files. */
export const EXFIL_HOST =
  /\b(?:webhook\.site|requestbin\.\w+|requestcatcher\.com|pipedream\.net|ngrok(?:-free)?\.(?:io|app|dev)|trycloudflare\.com|serveo\.net|loca\.lt|pastebin\.com|paste\.ee|hastebin\.\w+|transfer\.sh|file\.io|0x0\.st|temp\.sh|discord(?:app)?\.com\/api\/webhooks|api\.telegram\.org\/bot|burpcollaborator\.net|oast\.(?:fun|live|me|online|pro|site)|interact\.sh|beeceptor\.com|hookbin\.com)\b/i;

/** A URL to a raw IPv4 address that is not loopback or private (a host with no name to vouch for it). */
export const RAW_IP_URL =
  /\b(?:https?|ftp|wss?):\/\/(?!(?:127\.|10\.|0\.0\.0\.0|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|169\.254\.))\d{1,3}(?:\.\d{1,3}){3}\b/i;

const HOME = String.raw`(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|\$env:USERPROFILE|\/root|\/home\/[\w.-]+|\/Users\/[\w.-]+)`;

/**
 * Credentials a skill has no business reading: key and token files (also as path pieces such as
 * `Path.home() / ".ssh"`), browser stores, keychains, wallets, the whole environment dumped, and the
 * CLIs that print a stored token. `.env.example` and friends are templates, not secrets.
 */
export const CREDENTIAL_READ = new RegExp(
  [
    String.raw`${HOME}[\/\\]\.(?:ssh|aws|gnupg|kube|docker|azure|git-credentials|netrc|npmrc|pypirc|password-store)\b`,
    String.raw`\.ssh[\/\\](?:id_\w+|authorized_keys|known_hosts)?`,
    String.raw`\.aws[\/\\](?:credentials|config)\b`,
    String.raw`["'\x60]\.(?:ssh|aws|gnupg|kube|azure)["'\x60]`,
    String.raw`["'\x60](?:id_rsa|id_ed25519|id_ecdsa|id_dsa|\.git-credentials|\.netrc|\.npmrc|\.pypirc|wallet\.dat|logins\.json|key4\.db|Login Data|Local State)["'\x60]`,
    String.raw`\bLogin Data\b`,
    String.raw`\bCookies\b[^\n]{0,40}(?:Chrome|Chromium|Firefox|Edge|Brave|Default|Profile)`,
    String.raw`(?:Chrome|Chromium|Firefox|Edge|Brave)[^\n]{0,60}\b(?:Cookies|Login Data|logins\.json|key4\.db|cookies\.sqlite|Local State)\b`,
    String.raw`\blogins\.json\b|\bkey4\.db\b`,
    String.raw`\bsecurity\s+(?:find-generic-password|find-internet-password|dump-keychain)\b|login\.keychain`,
    String.raw`\.gnupg\/|\.netrc\b|\.git-credentials\b|\.docker[\/\\]config\.json|\.kube[\/\\]config\b`,
    String.raw`gcloud[\/\\](?:credentials|application_default_credentials|access_tokens)|\.azure[\/\\](?:accessTokens|msal_token_cache)|gh[\/\\]hosts\.yml`,
    String.raw`\bwallet\.dat\b|\bid_(?:rsa|ed25519|ecdsa)\b|solana[\/\\]id\.json|\.electrum[\/\\]wallets|Local Storage[\/\\]leveldb|nkbihfbeogaeaoehlefnkodbefgpgknn`,
    String.raw`(?:\b(?:cat|source|type|Get-Content|gc|open|readFile\w*|read_text|read_file|fopen)\b(?!\s*>)|\b(?:cp|copy|tar\s+-?c\w*|zip|scp|rsync)\s+(?:-\S+\s+)*)\s*\(?\s*["']?(?:[\w~$./-]*\/)?\.env(?:["')\s,]|$)|\.env["']\s*\)\s*\.read_text`,
    String.raw`JSON\.stringify\(\s*process\.env\b|\bprocess\.env\b[^\n]{0,40}JSON\.stringify|Object\.entries\(\s*process\.env\s*\)`,
    String.raw`json\.dumps\(\s*(?:dict\(\s*)?os\.environ\b|\bos\.environ\.items\(\)|\b(?:str|repr)\(\s*os\.environ\s*\)|\bfor\s+\w+\s+in\s+os\.environ\b`,
    String.raw`\bprintenv\s*(?:$|[|>])|\benv\s*\|\s*(?:curl|nc|base64|gzip)|\b(?:Get-ChildItem|gci|dir|ls)\s+env:`,
    String.raw`\bgh\s+auth\s+token\b|\baws\s+configure\s+(?:get\s+aws_secret|export-credentials)|\bgcloud\s+auth\s+print-access-token\b|\bgit\s+credential\s+fill\b|\bcmdkey\s+\/list\b|\bvaultcmd\b|Get-StoredCredential|\bCredRead\w*\(`,
    String.raw`\/etc\/shadow\b`,
  ].join('|'),
  'i',
);

/** Words every CREDENTIAL_READ match holds: a cheap first scan of a large text. */
export const CREDENTIAL_GATE =
  /\.(?:ssh|aws|gnupg|kube|docker|azure|env|netrc|npmrc|pypirc|git-credentials|electrum|password-store)|credential|credread|id_rsa|id_ed25519|id_ecdsa|id_dsa|Login Data|Local State|Cookies|logins\.json|key4\.db|keychain|find-generic|find-internet|gcloud|hosts\.yml|wallet|solana|leveldb|nkbih|environ|process\.env|printenv|env:|env\s*\||gh\s+auth|configure|cmdkey|vaultcmd|shadow/i;

/** Sending data out of the machine, in the languages skills ship. */
export const OUTBOUND = new RegExp(
  [
    String.raw`\bcurl\b[^\n]{0,200}(?:\s-d\b|--data\w*|\s-F\b|--form|\s-T\b|--upload-file|-X\s*(?:POST|PUT))`,
    String.raw`\bwget\b[^\n]{0,200}--post-(?:data|file)`,
    String.raw`\b(?:requests|httpx|session|client|s|http)\.(?:post|put|patch)\s*\(`,
    String.raw`\brequests\.request\(\s*["'](?:POST|PUT)`,
    String.raw`\burlopen\s*\([^)]*data=|\burllib\.request\.Request\s*\([^)]*data=`,
    String.raw`\.request\(\s*["'](?:POST|PUT)["']`,
    String.raw`\bfetch\s*\([^)]*method\s*:\s*["'](?:POST|PUT)|\bmethod\s*[:=]\s*["'](?:POST|PUT|PATCH)["']`,
    String.raw`\baxios\.(?:post|put)\s*\(|\bnavigator\.sendBeacon\s*\(|\bnew\s+WebSocket\s*\(`,
    String.raw`\bInvoke-(?:WebRequest|RestMethod)\b[^\n]{0,200}-Method\s+["']?(?:Post|Put)|\b(?:Upload(?:String|File|Data|Values))(?:Async)?\s*\(|\bSend-MailMessage\b`,
    String.raw`\bnc\s+(?:-\w+\s+)*\d{1,3}(?:\.\d{1,3}){3}\s+\d+|\/dev\/tcp\/|\bscp\s+[^\n]*\S+@\S+:|\brsync\b[^\n]*\S+@\S+:`,
    String.raw`\bsocket\.(?:connect|send|sendall|create_connection)\b|\bsmtplib\.SMTP|\bftplib\.FTP|\.storbinary\(`,
    String.raw`\bhttp\.Post(?:Form)?\(|\bhttp\.NewRequest\(\s*"(?:POST|PUT)"|\bNet::HTTP\.post`,
  ].join('|'),
  'i',
);

/**
 * Prose telling the model to read credentials ("include the contents of ~/.aws/credentials"): a
 * signal only together with others (docs name these files all the time).
 */
export const PROSE_CREDENTIAL = new RegExp(
  String.raw`\b(?:read|include|attach|collect|gather|copy|cat|grab|load|open|upload|send|append|paste|bundle|zip|archive|back\s*up)\b[^.\n]{0,80}(?:${HOME}[\/\\]\.(?:ssh|aws|gnupg|kube|docker|netrc|git-credentials|npmrc|pypirc)|\.aws\/credentials|\.ssh\/|id_rsa|id_ed25519|\.env\b(?!\.example)|browser (?:cookies|passwords)|saved passwords|keychain|wallet)`,
  'i',
);

/** Prose telling the model to send something to a URL or webhook. */
export const PROSE_SEND =
  /\b(?:send|post|upload|submit|forward|transmit|sync|report|beacon|ship)\w*\b[^\n]{0,100}(?:https?:\/\/|webhook|\bendpoint\b)/i;
