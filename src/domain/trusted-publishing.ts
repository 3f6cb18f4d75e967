/** GitHub Actions' OIDC issuer: what SKILLREG_OIDC_ISSUERS lists when unset, and the CLI's default. */
export const GITHUB_ACTIONS_ISSUER = 'https://token.actions.githubusercontent.com';
