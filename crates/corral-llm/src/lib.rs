//! LLM provider clients. (Being built: see issue 5.)
