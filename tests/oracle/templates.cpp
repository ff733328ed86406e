// SPDX-License-Identifier: GPL-2.0-only
/*
 * templates: symbolization oracle input in C++, built by g++ and clang++ at
 * -O2. Templates, lambdas and the STL put most instructions in inlined
 * frames from the library's headers, and give long demangled names: a
 * class template, a function template instantiated for several types,
 * std::sort with a lambda comparator, std::map, std::string, std::vector.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace oracle
{

template <typename T> class ring {
public:
	explicit ring(std::size_t capacity) : items(capacity), head(0), count(0)
	{
	}

	void push(const T &v)
	{
		items[(head + count) % items.size()] = v;
		if (count < items.size())
			count++;
		else
			head = (head + 1) % items.size();
	}

	template <typename F> T fold(T init, F f) const
	{
		for (std::size_t i = 0; i < count; i++)
			init = f(init, items[(head + i) % items.size()]);
		return init;
	}

	std::size_t size() const
	{
		return count;
	}

private:
	std::vector<T> items;
	std::size_t head, count;
};

template <typename T> T checksum(const std::vector<T> &v)
{
	T sum{};

	for (const T &x : v)
		sum = sum * 31 + x;
	return sum;
}

template <> std::string checksum(const std::vector<std::string> &v)
{
	std::string out;

	for (const std::string &s : v)
		out += s.substr(0, 2);
	return out;
}

template <typename T> std::vector<T> sorted(std::vector<T> v, bool descending)
{
	std::sort(v.begin(), v.end(), [descending](const T &a, const T &b) {
		return descending ? b < a : a < b;
	});
	return v;
}

struct word_stats {
	std::map<std::string, int> counts;
	std::size_t longest = 0;

	void add(const std::string &w)
	{
		counts[w]++;
		longest = std::max(longest, w.size());
	}
};

static std::vector<std::string> split(const std::string &text)
{
	std::vector<std::string> words;
	std::string cur;

	for (char c : text) {
		if (c == ' ' || c == ',' || c == '.') {
			if (!cur.empty())
				words.push_back(cur);
			cur.clear();
		} else {
			cur += c;
		}
	}
	if (!cur.empty())
		words.push_back(cur);
	return words;
}

} // namespace oracle

int main(int argc, char **argv)
{
	std::string text = argc > 1 ? argv[1] : "the quick brown fox jumps over the lazy dog";
	int rounds = argc > 2 ? std::atoi(argv[2]) : 10;
	std::vector<std::string> words = oracle::split(text);
	oracle::word_stats stats;
	oracle::ring<double> recent(8);
	std::vector<int> lengths;
	std::vector<long> hashes;

	for (int r = 0; r < rounds; r++) {
		for (const std::string &w : words) {
			stats.add(w);
			lengths.push_back(static_cast<int>(w.size()) + r);
			hashes.push_back(static_cast<long>(std::hash<std::string>{}(w) >> 8) + r);
			recent.push(w.size() * 0.5 + r);
		}
	}
	auto by_count = std::vector<std::pair<std::string, int> >(stats.counts.begin(),
								  stats.counts.end());
	std::sort(by_count.begin(), by_count.end(), [](const auto &a, const auto &b) {
		return a.second != b.second ? a.second > b.second : a.first < b.first;
	});
	std::vector<int> sl = oracle::sorted(lengths, true);
	std::vector<long> sh = oracle::sorted(hashes, false);
	std::vector<std::string> sw = oracle::sorted(words, false);
	double avg = recent.fold(0.0, [](double a, double b) { return a + b; }) / recent.size();

	std::printf("%s %d %d %ld %s %.2f %zu %d\n", by_count.front().first.c_str(),
		    oracle::checksum(sl), sl.front(), oracle::checksum(sh),
		    oracle::checksum(sw).c_str(), avg, stats.longest,
		    std::accumulate(lengths.begin(), lengths.end(), 0));
	return 0;
}
