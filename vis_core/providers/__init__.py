"""Model providers: scripted, Anthropic and OpenAI(-compatible) behind one streaming protocol."""
