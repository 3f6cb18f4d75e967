claude mcp add --transport http skills http://127.0.0.1:3000/mcp
# with SKILLREG_READ_AUTH=true
claude mcp add --transport http skills http://127.0.0.1:3000/mcp --header "Authorization: Bearer $SKILLREG_TOKEN"
